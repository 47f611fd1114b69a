import { createHash } from "node:crypto";
import type { RecordedRequest } from "./script";

/** Prompt tokens a request read from and wrote to the fake's cache. */
export interface CacheUse {
  read: number;
  write5m: number;
  write1h: number;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

// Prefixes seen, per fake (its listening address) and API key: Anthropic's cache belongs to an
// organisation, and a key names one here.
const seenPrefixes = new Map<string, Set<string>>();

/**
 * Anthropic's prompt caching, as far as a client can see it: the prompt is tools, then system, then
 * messages, block by block; each block with `cache_control` ends a cacheable prefix. The longest
 * such prefix this fake saw before (same model, same key) is read from the cache; the rest up to the
 * last marker is written, for one hour when that marker says `ttl: "1h"`, else five minutes.
 * Tokens are the fake's count (about four characters a token of the blocks' JSON). Null when the
 * request has no marker. Unlike the real API there is no minimum cacheable length.
 */
export function promptCacheUse(req: RecordedRequest): CacheUse | null {
  const body = isObject(req.body) ? req.body : {};
  const blocks = promptBlocks(body);
  const markers = blocks.flatMap((b, i) => (isObject(b.cache_control) ? [i] : []));
  const last = markers[markers.length - 1];
  if (last === undefined) return null;
  const scope = `${req.headers.host ?? ""}|${req.headers["x-api-key"] ?? req.headers.authorization ?? ""}`;
  const seen = seenPrefixes.get(scope) ?? new Set<string>();
  seenPrefixes.set(scope, seen);
  const prefixes = markers.map((i) => {
    const prefix = blocks.slice(0, i + 1).map(withoutMarker);
    const text = JSON.stringify(prefix);
    return { key: createHash("sha256").update(`${String(body.model)}\n${text}`).digest("hex"), tokens: Math.ceil(text.length / 4) };
  });
  const hit = [...prefixes].reverse().find((p) => seen.has(p.key));
  const read = hit?.tokens ?? 0;
  const whole = prefixes[prefixes.length - 1]!;
  const written = whole.key === hit?.key ? 0 : whole.tokens - read;
  for (const p of prefixes) seen.add(p.key);
  const marker = blocks[last]!.cache_control as Record<string, unknown>;
  return marker.ttl === "1h" ? { read, write5m: 0, write1h: written } : { read, write5m: written, write1h: 0 };
}

function promptBlocks(body: Record<string, unknown>): Record<string, unknown>[] {
  const blocks: unknown[] = [];
  if (Array.isArray(body.tools)) blocks.push(...body.tools);
  if (typeof body.system === "string") blocks.push({ type: "text", text: body.system });
  else if (Array.isArray(body.system)) blocks.push(...body.system);
  for (const m of Array.isArray(body.messages) ? body.messages : []) {
    if (!isObject(m)) continue;
    if (typeof m.content === "string") blocks.push({ role: m.role, type: "text", text: m.content });
    else if (Array.isArray(m.content)) blocks.push(...m.content.map((b) => (isObject(b) ? { role: m.role, ...b } : b)));
  }
  return blocks.filter(isObject);
}

function withoutMarker(block: Record<string, unknown>): Record<string, unknown> {
  const { cache_control: _marker, ...rest } = block;
  return rest;
}
