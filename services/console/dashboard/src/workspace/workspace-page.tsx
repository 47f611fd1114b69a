import { useEffect, useState } from "preact/hooks";
import { api } from "../api/client";
import type { Membership, Session } from "../api/types";
import { ErrorNotice, Show, useAction, useLoad } from "../ui/async";
import { abilitiesOf, type Abilities } from "./abilities";
import { ActivitySection } from "./activity-section";
import { AgentsSection } from "./agents-section";
import { AlertsSection } from "./alerts-section";
import { BudgetsSection } from "./budgets-section";
import { BroadcastSection } from "./broadcast-section";
import { KeysSection } from "./keys-section";
import { MembersSection } from "./members-section";
import { OrganisationSection } from "./organisation-section";
import { ProviderKeysSection } from "./provider-keys-section";
import { ReportsSection } from "./reports-section";
import { RoutingSection } from "./routing-section";
import { RunsSection } from "./runs-section";
import { WorkspacesSection } from "./workspaces-section";

/** What a section is drawn with: the role's abilities, a hook for an organisation rename, and the rest of the fragment (`routing/presets` gives `["presets"]`). */
interface SectionProps {
  can: Abilities;
  orgChanged: () => void;
  path: string[];
}

const SECTIONS = [
  { id: "activity", name: "Activity", show: (c: Abilities) => c.readUsage, render: (p: SectionProps) => <ActivitySection can={p.can} path={p.path} /> },
  { id: "budgets", name: "Budgets", show: (c: Abilities) => c.readUsage, render: () => <BudgetsSection /> },
  { id: "keys", name: "Keys", show: () => true, render: (p: SectionProps) => <KeysSection can={p.can} /> },
  { id: "provider-keys", name: "Provider keys", show: () => true, render: (p: SectionProps) => <ProviderKeysSection can={p.can} /> },
  { id: "workspaces", name: "Workspaces", show: () => true, render: (p: SectionProps) => <WorkspacesSection can={p.can} /> },
  { id: "agents", name: "Agents", show: () => true, render: (p: SectionProps) => <AgentsSection can={p.can} /> },
  { id: "runs", name: "Runs", show: (c: Abilities) => c.readUsage, render: (p: SectionProps) => <RunsSection can={p.can} /> },
  { id: "routing", name: "Routing", show: () => true, render: (p: SectionProps) => <RoutingSection can={p.can} path={p.path} /> },
  { id: "alerts", name: "Alerts", show: () => true, render: (p: SectionProps) => <AlertsSection can={p.can} /> },
  { id: "broadcast", name: "Broadcast", show: () => true, render: (p: SectionProps) => <BroadcastSection can={p.can} /> },
  { id: "reports", name: "Reports", show: (c: Abilities) => c.readUsage, render: (p: SectionProps) => <ReportsSection can={p.can} /> },
  { id: "members", name: "Members", show: () => true, render: (p: SectionProps) => <MembersSection can={p.can} /> },
  // A rename reloads the organisation list, so the header shows the new name.
  { id: "organisation", name: "Organisation", show: () => true, render: (p: SectionProps) => <OrganisationSection can={p.can} onRenamed={p.orgChanged} /> },
] as const;

type SectionId = (typeof SECTIONS)[number]["id"];

interface Place {
  section: SectionId;
  path: string[];
}

/** The section and the rest of the fragment: `#activity/requests/gen-1` is Activity with `["requests", "gen-1"]`. */
function placeOfHash(): Place {
  const [id = "", ...path] = location.hash.slice(1).split("/");
  const section = SECTIONS.find((s) => s.id === id)?.id ?? "activity";
  return { section, path };
}

function OrganisationSwitch({ orgs }: { orgs: Membership[] }) {
  const action = useAction();
  if (orgs.length < 2) return null;
  const current = orgs.find((o) => o.current);
  return (
    <div class="field inline">
      <label for="org-switch">Organisation</label>
      <select
        id="org-switch"
        value={current?.id}
        disabled={action.busy}
        onChange={(e) => {
          const org_id = e.currentTarget.value;
          void action.run(async () => void (await api.post("/v1/auth/switch", { org_id }))).then((ok) => ok && location.reload());
        }}
      >
        {orgs.map((o) => (
          <option key={o.id} value={o.id}>
            {o.name ?? o.id} ({o.role_name})
          </option>
        ))}
      </select>
      <ErrorNotice error={action.error} />
    </div>
  );
}

/** `/workspace`: a person's home, showing only the sections and actions their role allows. */
export function WorkspacePage({ session }: { session: Session }) {
  const orgs = useLoad(() => api.get<Membership[]>("/v1/auth/organizations"), []);
  const [place, setPlace] = useState<Place>(placeOfHash());
  // On a narrow screen the sections fold behind a Menu button; it closes once one is picked.
  const [menuOpen, setMenuOpen] = useState(false);
  // Back, forward and links to another section (or a part of one) change only the fragment: follow it.
  useEffect(() => {
    const follow = () => {
      setPlace(placeOfHash());
      setMenuOpen(false);
      scrollTo(0, 0);
    };
    addEventListener("hashchange", follow);
    return () => removeEventListener("hashchange", follow);
  }, []);
  const signOut = useAction();
  const welcome = new URLSearchParams(location.search).has("welcome");
  const who = session.user?.name ?? session.user?.email ?? session.key_name ?? "management key";
  return (
    <Show load={orgs} what="your organisation">
      {(list) => {
        const current = list.find((o) => o.current) ?? list[0];
        const can = abilitiesOf(current?.role ?? "readonly");
        const shown = SECTIONS.filter((s) => s.show(can));
        const active = shown.find((s) => s.id === place.section) ?? shown[0];
        return (
          <>
            <header class="top">
              <h1 class="brand">Router</h1>
              <p class="who">
                {current?.name ?? session.org_id} · <span data-testid="role">{current?.role_name}</span> · {who}
              </p>
              <OrganisationSwitch orgs={list} />
              <button type="button" disabled={signOut.busy} onClick={() => void signOut.run(async () => void (await api.post("/v1/auth/signout"))).then(() => location.assign("/signin"))}>
                Sign out
              </button>
            </header>
            <nav aria-label="Sections" class={menuOpen ? "sections open" : "sections"}>
              <button type="button" class="menu-toggle" aria-expanded={menuOpen} aria-controls="section-list" onClick={() => setMenuOpen(!menuOpen)}>
                Menu <span class="hint">· {active?.name}</span>
              </button>
              <ul class="tabs" id="section-list">
                {shown.map((s) => (
                  <li key={s.id}>
                    <a href={`#${s.id}`} aria-current={s.id === active?.id ? "page" : undefined} onClick={() => setMenuOpen(false)}>
                      {s.name}
                    </a>
                  </li>
                ))}
              </ul>
            </nav>
            <main>
              {welcome && <p role="status" class="screen-only">Welcome to Router. Start with a provider key, then create a key for your app.</p>}
              {!can.configure && <p class="hint screen-only">Your role ({current?.role_name}) can look but not change settings.</p>}
              <ErrorNotice error={signOut.error} />
              {active?.render({ can, orgChanged: orgs.reload, path: active.id === place.section ? place.path : [] })}
            </main>
          </>
        );
      }}
    </Show>
  );
}
