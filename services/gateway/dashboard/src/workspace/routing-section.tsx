import { GuardrailsPanel } from "../routing/guardrails";
import { PresetsPanel } from "../routing/presets";
import { PrivacyPanel } from "../routing/privacy-policy";
import { RoutePlayground } from "../routing/route-playground";
import { RoutingDefaultsPanel } from "../routing/routing-defaults";
import type { Abilities } from "./abilities";

/** Routing: the account defaults, presets with their versions, guardrails, the privacy policy and the route preview. */
export function RoutingSection({ can }: { can: Abilities }) {
  return (
    <section aria-labelledby="routing-heading">
      <h2 id="routing-heading">Routing</h2>
      <RoutingDefaultsPanel canWrite={can.manageOrg} />
      <PresetsPanel canWrite={can.configure} />
      <GuardrailsPanel canWrite={can.manageOrg} />
      <PrivacyPanel canWrite={can.manageOrg} />
      <RoutePlayground />
    </section>
  );
}
