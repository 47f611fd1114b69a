import { createHash, randomBytes } from "node:crypto";
import { xoroshiro128plus, type RandomGenerator } from "pure-rand";

/** A fresh seed for a request that sent no `routing_seed`: 64 random bits, URL-safe. */
export function freshSeed(): string {
  return randomBytes(8).toString("base64url");
}

/**
 * A generator seeded from the seed text: the first 32 bits of its SHA-256 seed xoroshiro128+
 * (pure-rand), so one seed gives one sequence in every process and release of Node.
 */
export function seededRandom(seed: string): () => number {
  const rng: RandomGenerator = xoroshiro128plus(createHash("sha256").update(seed).digest().readInt32BE(0));
  // 53 random bits (21 + 32) make a double in [0, 1), as Math.random does.
  return () => {
    const high = (rng.unsafeNext() >>> 11) * 0x1_0000_0000;
    const low = rng.unsafeNext() >>> 0;
    return (high + low) / 2 ** 53;
  };
}

/**
 * Orders items by a weighted random draw without replacement (Efraimidis and Spirakis, 2006): each
 * item gets the key ln(u) / w for a uniform u, and items are taken by descending key, so an item's
 * chance to come first is its weight over the total, and so on down the list. Weights must be
 * positive; one draw per item, in the items' order, so a seed replays the same order.
 */
export function weightedOrder<T>(items: readonly T[], weight: (item: T) => number, random: () => number): T[] {
  const keyed = items.map((item) => ({ item, key: Math.log(random()) / weight(item) }));
  // ln(0) is -Infinity: such an item goes last, as it would with any tiny u.
  keyed.sort((a, b) => b.key - a.key);
  return keyed.map((k) => k.item);
}
