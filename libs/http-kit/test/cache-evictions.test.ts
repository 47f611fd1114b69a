import type { Response } from "express";
import { EVICT_ALL, EVICT_KEYS_HEADER, EVICT_SESSIONS_HEADER, evictionsOf, evictKeys, evictSessions } from "../src";

/** The header part of an express response: enough for the evictions' writers. */
function answer(): Response & { headers: Record<string, string> } {
  const headers: Record<string, string> = {};
  return {
    headers,
    getHeader: (name: string) => headers[name],
    setHeader(name: string, value: string) {
      headers[name] = value;
      return this;
    },
  } as unknown as Response & { headers: Record<string, string> };
}

const hash = (i: number) => i.toString(16).padStart(64, "0");

describe("the console's cache evictions", () => {
  it("name each key and session once, across calls, and read back as lists", () => {
    const res = answer();
    evictKeys(res, [hash(1), hash(2)]);
    evictKeys(res, [hash(2), hash(3)]);
    evictSessions(res, [hash(9)]);
    expect(evictionsOf(res.headers)).toEqual({ keys: [hash(1), hash(2), hash(3)], sessions: [hash(9)] });
  });

  it("name nothing when nothing went stale", () => {
    const res = answer();
    evictKeys(res, []);
    expect(res.headers[EVICT_KEYS_HEADER]).toBeUndefined();
    expect(evictionsOf({})).toEqual({ keys: [], sessions: [] });
  });

  it("name everything instead of a list too long for a header, and stay so", () => {
    const res = answer();
    evictSessions(res, Array.from({ length: 200 }, (_, i) => hash(i)));
    expect(res.headers[EVICT_SESSIONS_HEADER]).toBe(EVICT_ALL);
    evictSessions(res, [hash(1000)]);
    expect(evictionsOf(res.headers).sessions).toEqual([EVICT_ALL]);
  });
});
