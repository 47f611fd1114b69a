import { useEffect, useState } from "preact/hooks";
import { api } from "../api/client";
import type { Membership, Session } from "../api/types";
import { ErrorNotice, Show, useAction, useLoad } from "../ui/async";
import { abilitiesOf, type Abilities } from "./abilities";
import { ActivitySection } from "./activity-section";
import { AgentsSection } from "./agents-section";
import { AlertsSection } from "./alerts-section";
import { BroadcastSection } from "./broadcast-section";
import { KeysSection } from "./keys-section";
import { MembersSection } from "./members-section";
import { OrganisationSection } from "./organisation-section";
import { ProviderKeysSection } from "./provider-keys-section";
import { ReportsSection } from "./reports-section";
import { RoutingSection } from "./routing-section";
import { RunsSection } from "./runs-section";
import { WorkspacesSection } from "./workspaces-section";

const SECTIONS = [
  { id: "activity", name: "Activity", show: (c: Abilities) => c.readUsage, render: (c: Abilities) => <ActivitySection can={c} /> },
  { id: "keys", name: "Keys", show: () => true, render: (c: Abilities) => <KeysSection can={c} /> },
  { id: "provider-keys", name: "Provider keys", show: () => true, render: (c: Abilities) => <ProviderKeysSection can={c} /> },
  { id: "workspaces", name: "Workspaces", show: () => true, render: (c: Abilities) => <WorkspacesSection can={c} /> },
  { id: "agents", name: "Agents", show: () => true, render: (c: Abilities) => <AgentsSection can={c} /> },
  { id: "runs", name: "Runs", show: (c: Abilities) => c.readUsage, render: (c: Abilities) => <RunsSection can={c} /> },
  { id: "routing", name: "Routing", show: () => true, render: (c: Abilities) => <RoutingSection can={c} /> },
  { id: "alerts", name: "Alerts", show: () => true, render: (c: Abilities) => <AlertsSection can={c} /> },
  { id: "broadcast", name: "Broadcast", show: () => true, render: (c: Abilities) => <BroadcastSection can={c} /> },
  { id: "reports", name: "Reports", show: (c: Abilities) => c.readUsage, render: (c: Abilities) => <ReportsSection can={c} /> },
  { id: "members", name: "Members", show: () => true, render: (c: Abilities) => <MembersSection can={c} /> },
  // A rename reloads the organisation list, so the header shows the new name.
  { id: "organisation", name: "Organisation", show: () => true, render: (c: Abilities, orgChanged: () => void) => <OrganisationSection can={c} onRenamed={orgChanged} /> },
] as const;

type SectionId = (typeof SECTIONS)[number]["id"];

function sectionOfHash(): SectionId {
  const id = location.hash.slice(1);
  return SECTIONS.find((s) => s.id === id)?.id ?? "activity";
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
  const [section, setSection] = useState<SectionId>(sectionOfHash());
  // Back, forward and links to another section change only the fragment: follow it.
  useEffect(() => {
    const follow = () => setSection(sectionOfHash());
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
        const active = shown.find((s) => s.id === section) ?? shown[0];
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
            <nav aria-label="Sections">
              <ul class="tabs">
                {shown.map((s) => (
                  <li key={s.id}>
                    <a href={`#${s.id}`} aria-current={s.id === active?.id ? "page" : undefined} onClick={() => setSection(s.id)}>
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
              {active?.render(can, orgs.reload)}
            </main>
          </>
        );
      }}
    </Show>
  );
}
