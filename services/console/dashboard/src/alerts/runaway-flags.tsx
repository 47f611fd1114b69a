import { useState } from "preact/hooks";
import { api } from "../api/client";
import type { RunawayFlag } from "../api/types";
import { ErrorNotice, Show, useAction, useLoad } from "../ui/async";
import { money, number, when } from "../ui/format";
import { Table } from "../ui/table";

type Action = "alert" | "pause";

function ActionSetting({ saved, canWrite, onSaved }: { saved: Action; canWrite: boolean; onSaved: () => void }) {
  const [choice, setChoice] = useState<Action>(saved);
  const action = useAction();
  const save = async (e: Event) => {
    e.preventDefault();
    if (await action.run(async () => void (await api.put("/v1/alerts/settings", { runaway_action: choice })))) onSaved();
  };
  return (
    <form class="inline-form" onSubmit={(e) => void save(e)}>
      <div class="field">
        <label for="runaway-action">When a key runs away</label>
        <select id="runaway-action" value={choice} disabled={!canWrite} onChange={(e) => setChoice(e.currentTarget.value as Action)}>
          <option value="alert">alert only</option>
          <option value="pause">pause the key and alert</option>
        </select>
      </div>
      {canWrite && (
        <button type="submit" disabled={action.busy}>
          Save runaway action
        </button>
      )}
      <ErrorNotice error={action.error} />
    </form>
  );
}

/**
 * Runaway spend: what a flag does (alert, or pause the key too) and the flags of the last 30 days. A
 * paused key is resumed from Keys.
 */
export function RunawayPanel({ canWrite }: { canWrite: boolean }) {
  const load = useLoad(() => Promise.all([api.get<{ runaway_action: Action }>("/v1/alerts/settings"), api.get<RunawayFlag[]>("/v1/alerts/runaway")]), []);
  return (
    <section aria-labelledby="runaway-heading">
      <h3 id="runaway-heading">Runaway spend</h3>
      <p class="hint">
        A key or an agent is flagged when its last 15 minutes cost at least 3 times its usual and $5, or made 5 times its usual requests and at least 300.
      </p>
      <Show load={load} what="runaway flags">
        {([settings, flags]) => (
          <>
            <ActionSetting key={settings.runaway_action} saved={settings.runaway_action} canWrite={canWrite} onSaved={load.reload} />
            {flags.length === 0 ? (
              <p class="hint" data-testid="no-flags">
                No flag in the last 30 days.
              </p>
            ) : (
              <Table headers={["When", "Subject", "Why", "Window", "Action"]} testId="flags">
                {flags.map((f) => (
                  <tr key={f.id}>
                    <td>{when(f.created_at)}</td>
                    <td>{f.subject_kind === "key" ? `key ${f.key_name ?? f.subject}` : `agent ${f.subject}`}</td>
                    <td>
                      {f.kind === "spend"
                        ? `${money(f.spend)} against a usual ${money(f.usual_spend)}`
                        : `${number(f.requests)} requests against a usual ${number(f.usual_requests)}`}
                    </td>
                    <td>
                      {when(f.window_start)} to {when(f.window_end)}
                    </td>
                    <td>{f.action === "paused" ? (f.key_paused ? "key paused (resume it in Keys)" : "key was paused, since resumed") : "alert"}</td>
                  </tr>
                ))}
              </Table>
            )}
          </>
        )}
      </Show>
    </section>
  );
}
