import type { Queryable } from "@router/db";
import { newId } from "@router/random-tokens";

/** A person who can sign in. */
export interface User {
  id: string;
  name: string | null;
  email: string | null;
  avatarUrl: string | null;
  /** How they sign in: an identity provider's slug, or `wallet`. */
  provider: string;
  createdAt: Date;
}

/** What a sign-in method knows about the person. */
export interface SignInProfile {
  provider: string;
  /** The provider's stable subject (`sub`), or the wallet address. */
  subject: string;
  name?: string | null;
  email?: string | null;
  avatarUrl?: string | null;
}

interface UserRow {
  id: string;
  name: string | null;
  email: string | null;
  avatar_url: string | null;
  provider: string;
  created_at: Date;
}

const fromRow = (r: UserRow): User => ({
  id: r.id,
  name: r.name,
  email: r.email,
  avatarUrl: r.avatar_url,
  provider: r.provider,
  createdAt: r.created_at,
});

export async function getUser(q: Queryable, id: string): Promise<User | null> {
  const r = await q.query<UserRow>(`SELECT id, name, email, avatar_url, provider, created_at FROM users WHERE id = $1`, [id]);
  return r.rows[0] ? fromRow(r.rows[0]) : null;
}

/**
 * The person a sign-in names, created on first sign-in; later sign-ins refresh the name, email and
 * picture the provider reports. `created` tells a new person (the `welcome` of the dashboard).
 */
export async function upsertUser(q: Queryable, profile: SignInProfile, now: Date): Promise<{ user: User; created: boolean }> {
  const r = await q.query<UserRow & { inserted: boolean }>(
    `INSERT INTO users (id, name, email, avatar_url, provider, provider_subject, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (provider, provider_subject) DO UPDATE
       SET name = COALESCE(EXCLUDED.name, users.name),
           email = COALESCE(EXCLUDED.email, users.email),
           avatar_url = COALESCE(EXCLUDED.avatar_url, users.avatar_url)
     RETURNING id, name, email, avatar_url, provider, created_at, (xmax = 0) AS inserted`,
    [newId("usr_"), profile.name ?? null, profile.email ?? null, profile.avatarUrl ?? null, profile.provider, profile.subject, now],
  );
  const row = r.rows[0];
  if (!row) throw new Error("upsert returned no user");
  return { user: fromRow(row), created: row.inserted };
}
