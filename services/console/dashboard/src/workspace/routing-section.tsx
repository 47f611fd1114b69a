import { GuardrailsPanel } from "../routing/guardrails";
import { PresetsPanel } from "../routing/presets";
import { PrivacyPanel } from "../routing/privacy-policy";
import { RoutePlayground } from "../routing/route-playground";
import { RoutingDefaultsPanel } from "../routing/routing-defaults";
import type { Abilities } from "./abilities";

const PARTS = [
  { id: "defaults", name: "Defaults", render: (c: Abilities) => <RoutingDefaultsPanel canWrite={c.manageOrg} /> },
  { id: "presets", name: "Presets", render: (c: Abilities) => <PresetsPanel canWrite={c.configure} /> },
  { id: "guardrails", name: "Guardrails", render: (c: Abilities) => <GuardrailsPanel canWrite={c.manageOrg} /> },
  { id: "privacy", name: "Privacy policy", render: (c: Abilities) => <PrivacyPanel canWrite={c.manageOrg} /> },
  { id: "preview", name: "Route preview", render: () => <RoutePlayground /> },
] as const;

/**
 * Routing, one part at a time: the account defaults, presets with their versions, guardrails, the
 * privacy policy and the route preview, each at its own address (`#routing/presets`), so a part is
 * linked to, bookmarked and reached with back and forward.
 */
export function RoutingSection({ can, path }: { can: Abilities; path: string[] }) {
  const active = PARTS.find((p) => p.id === path[0]) ?? PARTS[0];
  return (
    <section aria-labelledby="routing-heading">
      <h2 id="routing-heading">Routing</h2>
      <nav aria-label="Routing">
        <ul class="subnav">
          {PARTS.map((p) => (
            <li key={p.id}>
              <a href={`#routing/${p.id}`} aria-current={p.id === active.id ? "page" : undefined}>
                {p.name}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      {active.render(can)}
    </section>
  );
}
