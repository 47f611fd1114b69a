import type { eventViews } from "@router/proto";
import type { PinWrite } from "./pin-store";
import { parsePinRef } from "./sticky-key";

/**
 * The pin a completed request asks for: the endpoint that served it, under the sticky key Plan
 * gave it (`sticky_pin`). Only a request that was served pins: a refusal or a request every
 * endpoint failed leaves the pins as they were.
 */
export function pinOfServed(completed: eventViews.RequestCompletedHealth): PinWrite | null {
  const ref = parsePinRef(completed.stickyPin);
  if (!ref || !completed.orgId || !completed.endpointId || !completed.servedModel) return null;
  return {
    orgId: completed.orgId,
    hash: ref.hash,
    mode: ref.mode,
    modelId: completed.servedModel,
    endpointId: completed.endpointId,
    atMs: Number(completed.createdAtMs),
  };
}
