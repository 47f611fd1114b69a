import { nanosString, toUsd } from "@router/money";
import type { KeyUsage } from "./key-usage";
import type { StoredKey } from "./key-store";

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);
const limitUsd = (key: StoredKey): number | null => (key.limitNanos === null ? null : toUsd(key.limitNanos));

/** A row of `GET /v1/keys` (Key list row, in the service README). */
export function keyListRow(key: StoredKey, usage: KeyUsage | undefined) {
  const measured = key.limitNanos !== null && !key.disabled && usage ? usage : undefined;
  return {
    hash: key.hash,
    prefix: key.prefix,
    name: key.name,
    label: key.label,
    class: key.class,
    disabled: key.disabled,
    limit: limitUsd(key),
    limit_nanodollars: nanosString(key.limitNanos),
    limit_reset: key.limitReset,
    limit_mode: key.limitMode,
    include_byok_in_limit: key.includeByokInLimit,
    workspace_id: key.workspaceId,
    usage: measured ? toUsd(measured.usedNanos) : null,
    limit_remaining: measured && key.limitNanos !== null ? toUsd(key.limitNanos - measured.usedNanos) : null,
    limit_resets_at: measured ? iso(measured.resetsAt) : null,
    paused: key.paused,
    paused_reason: key.pausedReason,
    created_at: key.createdAt.toISOString(),
    updated_at: key.updatedAt.toISOString(),
    expires_at: iso(key.expiresAt),
    external_user: key.externalUser,
  };
}

/** `GET /v1/key` (Calling-key info, in the service README). */
export function callingKeyInfo(key: StoredKey, usedNanos: bigint) {
  return {
    label: key.label,
    limit: limitUsd(key),
    limit_remaining: key.limitNanos === null ? null : toUsd(key.limitNanos - usedNanos),
    usage: toUsd(usedNanos),
    limit_reset: key.limitReset,
    limit_mode: key.limitMode,
    include_byok_in_limit: key.includeByokInLimit,
    // Rate tiers follow lifetime credit purchases, and credits cannot be bought while every model
    // is BYOK-only, so every account is on the tier of an account that never purchased.
    is_free_tier: true,
  };
}

/** The `PATCH /v1/keys/{hash}` response (in the service README), plus the workspace a move changes. */
export function patchedKey(key: StoredKey) {
  return {
    hash: key.hash,
    name: key.name,
    class: key.class,
    limit: limitUsd(key),
    limit_reset: key.limitReset,
    limit_mode: key.limitMode,
    include_byok_in_limit: key.includeByokInLimit,
    workspace_id: key.workspaceId,
    paused: key.paused,
    paused_reason: key.pausedReason,
    updated_at: key.updatedAt.toISOString(),
  };
}
