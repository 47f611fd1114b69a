import { useState } from "preact/hooks";
import { api, call } from "../api/client";
import type { AlertChannel, AlertDelivery } from "../api/types";
import { ErrorNotice, Show, useAction, useLoad } from "../ui/async";
import { CopyButton } from "../ui/copy-button";
import { when } from "../ui/format";
import { Table } from "../ui/table";

type Kind = AlertChannel["kind"];

/** Thresholds as typed ("50, 80, 100"): numbers where they read as numbers, else as typed for the API to name. */
const thresholdsOf = (text: string) =>
  text
    .split(",")
    .map((t) => t.trim())
    .filter(Boolean)
    .map((t) => (Number.isFinite(Number(t)) ? Number(t) : t));

function AddChannel({ emailAvailable, onAdded }: { emailAvailable: boolean; onAdded: (c: AlertChannel) => void }) {
  const [kind, setKind] = useState<Kind>("webhook");
  const [name, setName] = useState("");
  const [target, setTarget] = useState("");
  const [thresholds, setThresholds] = useState("50, 80, 100");
  const action = useAction();
  const add = async (e: Event) => {
    e.preventDefault();
    const ok = await action.run(async () => onAdded(await api.post<AlertChannel>("/v1/alerts/channels", { kind, name, target, thresholds: thresholdsOf(thresholds) })));
    if (ok) {
      setName("");
      setTarget("");
    }
  };
  return (
    <form class="card" onSubmit={(e) => void add(e)} aria-labelledby="new-channel-heading">
      <h4 id="new-channel-heading">New channel</h4>
      <div class="field">
        <label for="channel-kind">Kind</label>
        <select id="channel-kind" value={kind} onChange={(e) => setKind(e.currentTarget.value as Kind)}>
          <option value="webhook">webhook (signed HTTPS POST)</option>
          <option value="chat">chat (incoming-webhook URL)</option>
          {emailAvailable && <option value="email">email</option>}
        </select>
      </div>
      <div class="field">
        <label for="channel-name">Channel name</label>
        <input id="channel-name" value={name} onInput={(e) => setName(e.currentTarget.value)} required />
      </div>
      <div class="field">
        <label for="channel-target">{kind === "email" ? "Address" : "URL (public https)"}</label>
        <input id="channel-target" value={target} onInput={(e) => setTarget(e.currentTarget.value)} required />
      </div>
      <div class="field">
        <label for="channel-thresholds">Alert at these percentages of a ceiling (comma separated)</label>
        <input id="channel-thresholds" value={thresholds} onInput={(e) => setThresholds(e.currentTarget.value)} />
      </div>
      <ErrorNotice error={action.error} />
      <button type="submit" class="primary" disabled={action.busy}>
        Add channel
      </button>
    </form>
  );
}

function ChannelCard({ c, canWrite, onChanged }: { c: AlertChannel; canWrite: boolean; onChanged: () => void }) {
  const action = useAction();
  const [tested, setTested] = useState<{ status: string; http_status: number | null; error: string | null }>();
  const test = () => void action.run(async () => setTested(await api.post(`/v1/alerts/channels/${c.id}/test`))).then((ok) => ok && onChanged());
  return (
    <li class="card">
      <h4>{c.name}</h4>
      <p class="hint">
        {c.kind} to <code>{c.target}</code>; at {c.thresholds.join("%, ")}%{c.disabled ? "; disabled" : ""}
      </p>
      {tested && (
        <p role="status" data-testid={`test-${c.id}`}>
          Test {tested.status}
          {tested.http_status ? ` (HTTP ${tested.http_status})` : ""}
          {tested.error ? `: ${tested.error}` : ""}
        </p>
      )}
      {canWrite && (
        <div class="row-actions">
          <button type="button" disabled={action.busy} onClick={test} aria-label={`Send test to ${c.name}`}>
            Send test
          </button>
          <button
            type="button"
            class="danger"
            disabled={action.busy}
            aria-label={`Remove channel ${c.name}`}
            onClick={() => confirm(`Remove ${c.name}?`) && void action.run(async () => void (await api.del(`/v1/alerts/channels/${c.id}`))).then((ok) => ok && onChanged())}
          >
            Remove
          </button>
        </div>
      )}
      <ErrorNotice error={action.error} />
    </li>
  );
}

function Deliveries({ tick }: { tick: number }) {
  const load = useLoad(() => api.get<AlertDelivery[]>("/v1/alerts/deliveries"), [tick]);
  return (
    <section aria-labelledby="deliveries-heading">
      <h3 id="deliveries-heading">Recent deliveries</h3>
      <Show load={load} what="deliveries">
        {(rows) =>
          rows.length === 0 ? (
            <p class="hint">No alert sent in the last 90 days.</p>
          ) : (
            <Table headers={["When", "Channel", "Event", "About", "Outcome"]} testId="deliveries">
              {rows.map((d) => (
                <tr key={d.id}>
                  <td>{when(d.created_at)}</td>
                  <td>{d.channel_name ?? "removed channel"}</td>
                  <td>
                    {d.event}
                    {d.threshold !== null ? ` at ${d.threshold}%` : ""}
                  </td>
                  <td>{d.key_name ?? d.agent_tag ?? ""}</td>
                  <td>
                    {d.status}
                    {d.http_status ? ` (HTTP ${d.http_status})` : ""}
                    {d.error ? `: ${d.error}` : ""}
                  </td>
                </tr>
              ))}
            </Table>
          )
        }
      </Show>
    </section>
  );
}

/** Usage-alert channels (a webhook's signing secret shown once) and the delivery log. */
export function AlertChannelsPanel({ canWrite }: { canWrite: boolean }) {
  const load = useLoad(fetchChannels, []);
  const [created, setCreated] = useState<AlertChannel>();
  const [tick, setTick] = useState(0);
  const changed = () => {
    load.reload();
    setTick((t) => t + 1);
  };
  return (
    <section aria-labelledby="channels-heading">
      <h3 id="channels-heading">Alert channels</h3>
      {created?.signing_secret && (
        <div class="card secret" role="status">
          <p>
            Signing secret of <strong>{created.name}</strong>: receivers check the x-router-signature header with it. It is shown this once.
          </p>
          <code data-testid="channel-secret">{created.signing_secret}</code> <CopyButton text={created.signing_secret} label="Copy the signing secret" />
          <button type="button" onClick={() => setCreated(undefined)}>
            Done
          </button>
        </div>
      )}
      <Show load={load} what="alert channels">
        {({ channels, emailAvailable }) => (
          <>
            {canWrite && (
              <AddChannel
                emailAvailable={emailAvailable}
                onAdded={(c) => {
                  setCreated(c);
                  changed();
                }}
              />
            )}
            {channels.length === 0 ? (
              <p class="hint">No channels: alerts are not sent anywhere.</p>
            ) : (
              <ul class="plain list" data-testid="channels">
                {channels.map((c) => (
                  <ChannelCard key={c.id} c={c} canWrite={canWrite} onChanged={changed} />
                ))}
              </ul>
            )}
          </>
        )}
      </Show>
      <Deliveries tick={tick} />
    </section>
  );
}

/** The channels, and whether the deployment can send email (the list's `email_available`). */
async function fetchChannels(): Promise<{ channels: AlertChannel[]; emailAvailable: boolean }> {
  const page = (await call<AlertChannel[]>("GET", "/v1/alerts/channels")) as { data: AlertChannel[]; email_available?: boolean };
  return { channels: page.data, emailAvailable: page.email_available === true };
}
