import type { Request, Response } from "express";
import type { Queryable } from "@router/db";
import type { Clock } from "@router/money";
import { clearSessionCookies, sessionTokenHash, setSessionCookies } from "@router/http-kit";
import { endSession, insertSession, newSessionToken, SESSION_TTL_MS, type AuthMethod } from "./session-store";

/** A session written to the database whose cookies are not sent yet. */
export interface IssuedSession {
  token: string;
  orgId: string;
  expiresAt: Date;
}

export interface SessionStart {
  orgId: string;
  userId: string | null;
  keyHash: string | null;
  authMethod: AuthMethod;
}

/**
 * Starts and ends dashboard sessions. Starting is two steps: `issue` writes the row (inside the
 * caller's transaction), `send` sets the cookies once that transaction has committed, so a
 * refused request never hands out a cookie.
 */
export class SessionIssuer {
  constructor(
    private readonly deps: { clock: Clock; csrfSecret: string; ttlMs?: number },
  ) {}

  async issue(q: Queryable, start: SessionStart): Promise<IssuedSession> {
    const now = this.deps.clock.now();
    const token = newSessionToken();
    const expiresAt = new Date(now.getTime() + (this.deps.ttlMs ?? SESSION_TTL_MS));
    await insertSession(q, { tokenHash: sessionTokenHash(token), ...start, now, expiresAt });
    return { token, orgId: start.orgId, expiresAt };
  }

  send(req: Request, res: Response, issued: IssuedSession): void {
    setSessionCookies(req, res, issued.token, issued.expiresAt, this.deps.csrfSecret);
  }

  /** Ends one session in the database (inside the caller's transaction); true when it was live. Then name it in the answer (`evictSessions`). */
  async end(q: Queryable, tokenHash: string): Promise<boolean> {
    return (await endSession(q, tokenHash, this.deps.clock.now())).length > 0;
  }

  clear(req: Request, res: Response): void {
    clearSessionCookies(req, res);
  }
}
