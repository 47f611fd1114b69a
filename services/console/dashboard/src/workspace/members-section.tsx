import { useState } from "preact/hooks";
import { api } from "../api/client";
import type { Invitation, Member, Role } from "../api/types";
import { ErrorNotice, Show, useAction, useLoad } from "../ui/async";
import { CopyButton } from "../ui/copy-button";
import { when } from "../ui/format";
import type { Abilities } from "./abilities";

/** The roles an owner may give (the API's assignable roles), with the names the dashboard shows. */
const ASSIGNABLE: Array<{ role: Role; name: string }> = [
  { role: "owner", name: "Owner" },
  { role: "member", name: "Developer" },
  { role: "billing", name: "Finance" },
];
const nameOf = (role: Role) => ASSIGNABLE.find((r) => r.role === role)?.name ?? role;

function AssignableRoles() {
  return (
    <>
      {ASSIGNABLE.map((r) => (
        <option key={r.role} value={r.role}>
          {r.name}
        </option>
      ))}
    </>
  );
}

function MemberRow({ m, can, onChanged }: { m: Member; can: Abilities; onChanged: () => void }) {
  const [role, setRole] = useState<Role>(m.role);
  const action = useAction();
  const who = m.name ?? m.email ?? m.user_id;
  const act = (fn: () => Promise<unknown>) => void action.run(async () => void (await fn())).then((ok) => ok && onChanged());
  return (
    <li class="card">
      <h3>
        {who}
        {m.is_you ? " (you)" : ""}
      </h3>
      <p class="hint">
        {m.email && m.name ? `${m.email}, ` : ""}signs in with {m.provider}; joined {when(m.joined_at)}
      </p>
      <p>
        Role: <span data-testid={`role-of-${m.user_id}`}>{m.role_name}</span>
      </p>
      {can.manageMembers && (
        <form
          class="inline-form"
          onSubmit={(e) => {
            e.preventDefault();
            act(() => api.patch(`/v1/organization/members/${m.user_id}`, { role }));
          }}
        >
          <div class="field">
            <label for={`role-${m.user_id}`}>New role for {who}</label>
            <select id={`role-${m.user_id}`} value={role} onChange={(e) => setRole(e.currentTarget.value as Role)}>
              {/* A role the owner cannot give (admin, read-only) stays listed while it is the member's. */}
              {!ASSIGNABLE.some((r) => r.role === m.role) && <option value={m.role}>{m.role_name}</option>}
              <AssignableRoles />
            </select>
          </div>
          <button type="submit" disabled={action.busy} aria-label={`Change role for ${who}`}>
            Change role
          </button>
          <button
            type="button"
            class="danger"
            disabled={action.busy}
            aria-label={`Remove ${who}`}
            onClick={() => {
              if (confirm(`Remove ${who}? Their keys in this organisation are revoked and their sessions end.`)) act(() => api.del(`/v1/organization/members/${m.user_id}`));
            }}
          >
            Remove
          </button>
        </form>
      )}
      <ErrorNotice error={action.error} />
    </li>
  );
}

/** Open invitations, a new one (its link shown once) and revoking (owners only, as the API allows). */
function Invitations() {
  const load = useLoad(() => api.get<Invitation[]>("/v1/organization/invitations"), []);
  const [role, setRole] = useState<Role>("member");
  const [created, setCreated] = useState<Invitation>();
  const action = useAction();
  const invite = async (e: Event) => {
    e.preventDefault();
    const ok = await action.run(async () => setCreated(await api.post<Invitation>("/v1/organization/invitations", { role })));
    if (ok) load.reload();
  };
  const revoke = (id: string) => void action.run(async () => void (await api.del(`/v1/organization/invitations/${id}`))).then((ok) => ok && load.reload());
  return (
    <section aria-labelledby="invitations-heading">
      <h3 id="invitations-heading">Invitations</h3>
      {created?.url && (
        <div class="card secret" role="status">
          <p>
            Send this link to the person you invite as <strong>{nameOf(created.role)}</strong>. It is shown this once and works until {when(created.expires_at)}.
          </p>
          <code data-testid="invitation-link">{created.url}</code> <CopyButton text={created.url} label="Copy the invitation link" />
          <button type="button" onClick={() => setCreated(undefined)}>
            Done
          </button>
        </div>
      )}
      <form class="card inline-form" onSubmit={(e) => void invite(e)}>
        <div class="field">
          <label for="invite-role">Invite someone as</label>
          <select id="invite-role" value={role} onChange={(e) => setRole(e.currentTarget.value as Role)}>
            <AssignableRoles />
          </select>
        </div>
        <button type="submit" class="primary" disabled={action.busy}>
          Create invitation link
        </button>
      </form>
      <ErrorNotice error={action.error} />
      <Show load={load} what="invitations">
        {(open) =>
          open.length === 0 ? (
            <p class="hint">No open invitations.</p>
          ) : (
            <ul class="plain list" data-testid="invitations">
              {open.map((i) => (
                <li key={i.id}>
                  {nameOf(i.role)}, from {i.created_by_name ?? "a management key"}, expires {when(i.expires_at)}{" "}
                  <button type="button" class="link" disabled={action.busy} onClick={() => revoke(i.id)} aria-label={`Revoke the ${nameOf(i.role)} invitation ${i.id}`}>
                    Revoke
                  </button>
                </li>
              ))}
            </ul>
          )
        }
      </Show>
    </section>
  );
}

/** Who is in the organisation and with what role; owners change roles, remove people and invite. */
export function MembersSection({ can }: { can: Abilities }) {
  const load = useLoad(() => api.get<Member[]>("/v1/organization/members"), []);
  return (
    <section aria-labelledby="members-heading">
      <h2 id="members-heading">Members</h2>
      {!can.manageMembers && <p class="hint">Only an owner changes roles, removes people and invites.</p>}
      <Show load={load} what="members">
        {(members) =>
          members.length === 0 ? (
            <p class="hint">No one has joined yet: the organisation is run with management keys.</p>
          ) : (
            <ul class="plain list" data-testid="members">
              {members.map((m) => (
                <MemberRow key={`${m.user_id}-${m.role}`} m={m} can={can} onChanged={load.reload} />
              ))}
            </ul>
          )
        }
      </Show>
      {can.manageMembers && <Invitations />}
    </section>
  );
}
