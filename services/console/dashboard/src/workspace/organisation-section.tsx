import { useState } from "preact/hooks";
import { api } from "../api/client";
import type { Organisation } from "../api/types";
import { ErrorNotice, Show, useAction, useLoad } from "../ui/async";
import { number, when } from "../ui/format";
import type { Abilities } from "./abilities";

/** The rename form: the name as typed is sent, and the API's rules (trimmed, 1 to 80 characters, no control characters) decide. */
function RenameForm({ saved, onRenamed }: { saved: Organisation; onRenamed: () => void }) {
  const [name, setName] = useState(saved.name);
  const action = useAction();
  const rename = async (e: Event) => {
    e.preventDefault();
    const ok = await action.run(async () => {
      // The API trims: the field shows the name as saved.
      setName((await api.patch<Organisation>("/v1/organization", { name })).name);
    });
    if (ok) onRenamed();
  };
  return (
    <form class="card inline-form" onSubmit={(e) => void rename(e)}>
      <div class="field">
        <label for="organisation-name">Organisation name</label>
        <input id="organisation-name" value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </div>
      <button type="submit" class="primary" disabled={action.busy}>
        Rename organisation
      </button>
      <ErrorNotice error={action.error} />
    </form>
  );
}

/**
 * The organisation as `GET /v1/organization` has it. Owners and admins (`org:write`) rename it; the
 * other roles see the same facts with no form.
 */
export function OrganisationSection({ can, onRenamed }: { can: Abilities; onRenamed: () => void }) {
  const load = useLoad(() => api.get<Organisation>("/v1/organization"), []);
  const renamed = () => {
    load.reload();
    onRenamed();
  };
  return (
    <section aria-labelledby="organisation-heading">
      <h2 id="organisation-heading">Organisation</h2>
      <Show load={load} what="the organisation">
        {(o) => (
          <>
            <dl class="facts card" data-testid="organisation">
              <dt>Name</dt>
              <dd data-testid="organisation-name">{o.name}</dd>
              <dt>Id</dt>
              <dd>
                <code>{o.id}</code>
              </dd>
              <dt>Slug</dt>
              <dd>
                <code>{o.slug}</code>
              </dd>
              <dt>Plan</dt>
              <dd>{o.plan}</dd>
              <dt>Members</dt>
              <dd data-testid="organisation-members">{number(o.members)}</dd>
              <dt>Created</dt>
              <dd>{when(o.created_at)}</dd>
            </dl>
            <p class="hint">The id and the slug never change{can.manageOrg ? "." : "; only an owner or an admin renames the organisation."}</p>
            {can.manageOrg && <RenameForm key={o.id} saved={o} onRenamed={renamed} />}
          </>
        )}
      </Show>
    </section>
  );
}
