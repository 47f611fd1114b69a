import { AlertChannelsPanel } from "../alerts/alert-channels";
import { RunawayPanel } from "../alerts/runaway-flags";
import type { Abilities } from "./abilities";

/** Alerts: where usage alerts go, what was sent, and runaway-spend flags with their action. */
export function AlertsSection({ can }: { can: Abilities }) {
  return (
    <section aria-labelledby="alerts-heading">
      <h2 id="alerts-heading">Alerts</h2>
      <AlertChannelsPanel canWrite={can.configure} />
      <RunawayPanel canWrite={can.configure} />
    </section>
  );
}
