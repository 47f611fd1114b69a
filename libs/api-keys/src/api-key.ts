import type { WindowKind } from "@router/money";
import type { KeyClass } from "./key-secret";

/** A key's own fields: what the console stores and the gateway authenticates and charges with. */
export interface ApiKey {
  /** Hex HMAC-SHA256 of the plaintext under ROUTER_KEY_PEPPER; identifies the key. */
  hash: string;
  /** The first characters of the plaintext, e.g. `rt-v1-ab12`, safe to show. */
  prefix: string;
  name: string | null;
  label: string | null;
  class: KeyClass;
  workspaceId: string | null;
  /** That workspace's name (the gateway's auth cache keeps it up to ten seconds after a rename). */
  workspaceName: string | null;
  /** Ceiling in nanodollars, null for none. */
  limitNanos: bigint | null;
  limitReset: WindowKind | null;
  limitMode: "hard" | "soft";
  includeByokInLimit: boolean;
  paused: boolean;
  pausedReason: "runaway" | "manual" | null;
  expiresAt: Date | null;
}
