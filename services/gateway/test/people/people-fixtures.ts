import type { Role } from "@router/access";
import { Browser } from "@router/testkit";
import { insertMember } from "../../../console/src/people/member-store";
import { signInPerson } from "../../../console/src/people/person-sign-in";
import { csrfTokenOf, sessionTokenHash } from "@router/http-kit";
import { insertSession, newSessionToken } from "../../../console/src/sessions/session-store";
import { browserOf, type Harness } from "../harness";

export interface SignedInPerson {
  userId: string;
  /** The organisation created for them at first sign-in. */
  ownOrgId: string;
  browser: Browser;
}

let subjects = 0;

/**
 * A person signed in the way an identity provider sign-in leaves them (their own organisation,
 * a session cookie and its CSRF cookie), optionally holding a seat in `seat.orgId` with
 * `seat.role` and a session there. The sign-in routes themselves are tested on their own.
 */
export async function signedInPerson(
  h: Harness,
  name: string,
  seat?: { orgId: string; role: Role },
  url = h.url,
): Promise<SignedInPerson> {
  const now = h.clock.now();
  const token = newSessionToken();
  const person = await h.consoleDb.tx(async (q) => {
    const signedIn = await signInPerson(q, { provider: "oidc", subject: `subject-${++subjects}-${name}`, name, email: `${name.toLowerCase()}@example.com` }, now);
    if (seat) await insertMember(q, seat.orgId, signedIn.user.id, seat.role, now);
    await insertSession(q, {
      tokenHash: sessionTokenHash(token),
      orgId: seat?.orgId ?? signedIn.orgId,
      userId: signedIn.user.id,
      keyHash: null,
      authMethod: "oauth",
      now,
      expiresAt: new Date(now.getTime() + 24 * 3600_000),
    });
    return signedIn;
  });
  const browser = browserOf(h, url);
  await browser.jar.setCookie(`rt_session=${token}; Path=/; HttpOnly`, url);
  await browser.jar.setCookie(`rt_csrf=${csrfTokenOf(token, h.secrets.ROUTER_INTERNAL_SECRET)}; Path=/`, url);
  return { userId: person.user.id, ownOrgId: person.orgId, browser };
}
