import { createHmac, timingSafeEqual } from "node:crypto";
import { DomainError } from "@router/errors";

/** Who is calling, as the gateway authenticated it. Forwarded to owning services, signed. */
export interface Identity {
  orgId: string;
  /** "inference" or "management" key, or a dashboard "session". */
  credential: "inference" | "management" | "session";
  keyHash: string | null;
  keyName: string | null;
  workspaceId: string | null;
  role: "owner" | "admin" | "member" | "billing" | "readonly";
  userId: string | null;
  operator: boolean;
}

export const IDENTITY_HEADER = "x-router-identity";
const MAX_AGE_MS = 60_000;

/** Signs an identity as `<base64url json>.<base64url hmac>`, stamped with the signing time. */
export function signIdentity(identity: Identity, secret: string, nowMs = Date.now()): string {
  const payload = Buffer.from(JSON.stringify({ ...identity, iat: nowMs })).toString("base64url");
  const mac = createHmac("sha256", secret).update(payload).digest("base64url");
  return `${payload}.${mac}`;
}

/** Verifies a signed identity header; throws 401 when it is missing, forged or stale. */
export function verifyIdentity(header: string | undefined, secret: string, nowMs = Date.now()): Identity {
  if (!header) throw new DomainError("unauthorized", "missing identity context");
  const dot = header.indexOf(".");
  const payload = header.slice(0, dot);
  const mac = Buffer.from(header.slice(dot + 1), "base64url");
  const expected = createHmac("sha256", secret).update(payload).digest();
  if (dot < 0 || mac.length !== expected.length || !timingSafeEqual(mac, expected)) {
    throw new DomainError("unauthorized", "invalid identity context");
  }
  const parsed = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as Identity & { iat: number };
  if (Math.abs(nowMs - parsed.iat) > MAX_AGE_MS) throw new DomainError("unauthorized", "stale identity context");
  const { iat: _iat, ...identity } = parsed;
  return identity;
}
