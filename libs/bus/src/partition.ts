/**
 * The partition of a key: FNV-1a over the key's UTF-8 bytes. Stable across processes and releases,
 * so every producer sends one key to one partition.
 */
export function partitionOf(key: string, partitions: number): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(key, "utf8")) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % partitions;
}
