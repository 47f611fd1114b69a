import type { CallerKey } from "../../src/auth/caller";

/** An inference key of workspace `ws_a` with no ceiling; `o` overrides any field. */
export function callerKey(o: Partial<CallerKey> = {}): CallerKey {
  return {
    hash: "h1",
    prefix: "rt-v1-ab",
    name: null,
    label: null,
    class: "inference",
    workspaceId: "ws_a",
    workspaceName: "A",
    limitNanos: null,
    limitReset: null,
    limitMode: "hard",
    includeByokInLimit: false,
    paused: false,
    pausedReason: null,
    expiresAt: null,
    ...o,
  };
}
