import type { Queryable } from "@router/db";
import { createPersonalOrganisation } from "../organisations/organisation-creation";
import { membershipsOf } from "./member-store";
import { upsertUser, type SignInProfile, type User } from "./user-store";

export interface SignedInPerson {
  user: User;
  /** First sign-in: the person and their own organisation were just created. */
  isNewUser: boolean;
  /** The organisation the new session opens in. */
  orgId: string;
}

/**
 * The person behind a completed sign-in (identity provider or wallet) and the organisation their
 * session opens in: the one they last had a session in while still holding its seat, else their
 * oldest seat. A new person, or one left without any seat, gets an organisation of their own.
 * Call inside a transaction; start the session with `SessionIssuer.issue` in the same one.
 */
export async function signInPerson(q: Queryable, profile: SignInProfile, now: Date): Promise<SignedInPerson> {
  const { user, created } = await upsertUser(q, profile, now);
  const seats = await membershipsOf(q, user.id);
  if (seats.length === 0) {
    return { user, isNewUser: created, orgId: await createPersonalOrganisation(q, { userId: user.id, name: user.name }, now) };
  }
  const last = await q.query<{ org_id: string }>(
    `SELECT s.org_id FROM sessions s JOIN members m ON m.org_id = s.org_id AND m.user_id = s.user_id
     WHERE s.user_id = $1 ORDER BY s.created_at DESC LIMIT 1`,
    [user.id],
  );
  return { user, isNewUser: created, orgId: last.rows[0]?.org_id ?? seats[0]!.orgId };
}
