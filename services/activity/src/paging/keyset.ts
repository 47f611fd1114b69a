import { invalid } from "@router/errors";

/** The position after which the next page starts: the last row's (created_at, id). */
export interface Position {
  createdAt: Date;
  id: string;
}

export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}

export function encodeCursor(p: Position): string {
  return Buffer.from(JSON.stringify([p.createdAt.toISOString(), p.id]), "utf8").toString("base64url");
}

/** Reads a cursor this service issued; anything else is a 400 naming `cursor`. */
export function decodeCursor(cursor: string): Position {
  const bad = () => invalid("cursor", "not a cursor this list returned");
  if (!/^[A-Za-z0-9_-]{1,400}$/.test(cursor)) throw bad();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw bad();
  }
  if (!Array.isArray(parsed) || parsed.length !== 2) throw bad();
  const [at, id] = parsed as unknown[];
  if (typeof at !== "string" || typeof id !== "string" || id === "") throw bad();
  const createdAt = new Date(at);
  if (Number.isNaN(createdAt.getTime())) throw bad();
  return { createdAt, id };
}

/** A stored row as the keyset orders it. */
export interface KeysetRow {
  created_at: Date | string;
  id: string;
}

const storedPosition = (r: KeysetRow): Position => ({ createdAt: new Date(r.created_at), id: r.id });

/**
 * Cuts `rows` (fetched with `limit + 1`) to one page; the extra row only tells whether another
 * page exists. `positionOf` says where a row sits in the order, for lists not keyed by
 * (created_at, id).
 */
export function toPage<R extends KeysetRow, T>(rows: R[], limit: number, render: (r: R) => T): Page<T>;
export function toPage<R, T>(rows: R[], limit: number, render: (r: R) => T, positionOf: (r: R) => Position): Page<T>;
export function toPage<R, T>(rows: R[], limit: number, render: (r: R) => T, positionOf?: (r: R) => Position): Page<T> {
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  const position = positionOf ?? (storedPosition as (r: R) => Position);
  return {
    data: page.map(render),
    next_cursor: rows.length > limit && last !== undefined ? encodeCursor(position(last)) : null,
  };
}
