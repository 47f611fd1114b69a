import { useState } from "preact/hooks";
import { api } from "../api/client";
import type { Destination } from "../api/types";
import { ErrorNotice, Show, useAction, useLoad } from "../ui/async";
import { CopyButton } from "../ui/copy-button";
import { when } from "../ui/format";
import { numberOf } from "../ui/number-input";
import type { Abilities } from "./abilities";

type Kind = Destination["kind"];

function AddDestination({ onAdded }: { onAdded: (d: Destination) => void }) {
  const [kind, setKind] = useState<Kind>("webhook");
  const [name, setName] = useState("");
  const [url, setUrl] = useState("");
  const [headerName, setHeaderName] = useState("");
  const [headerValue, setHeaderValue] = useState("");
  const [sample, setSample] = useState("1");
  const action = useAction();
  const add = async (e: Event) => {
    e.preventDefault();
    const body = {
      kind,
      url,
      name: name || undefined,
      sample_rate: numberOf(sample),
      ...(kind === "otlp" && headerName ? { header_name: headerName, header_value: headerValue } : {}),
    };
    if (await action.run(async () => onAdded(await api.post<Destination>("/v1/broadcast/destinations", body)))) {
      setName("");
      setUrl("");
      setHeaderValue("");
    }
  };
  return (
    <form class="card" onSubmit={(e) => void add(e)} aria-labelledby="new-destination-heading">
      <h3 id="new-destination-heading">New destination</h3>
      <div class="field">
        <label for="destination-kind">Kind</label>
        <select id="destination-kind" value={kind} onChange={(e) => setKind(e.currentTarget.value as Kind)}>
          <option value="webhook">webhook (signed JSON per request)</option>
          <option value="otlp">OpenTelemetry (OTLP/HTTP traces)</option>
        </select>
      </div>
      <div class="field">
        <label for="destination-name">Destination name (optional)</label>
        <input id="destination-name" value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </div>
      <div class="field">
        <label for="destination-url">Destination URL (public https)</label>
        <input id="destination-url" value={url} onInput={(e) => setUrl(e.currentTarget.value)} required />
      </div>
      {kind === "otlp" && (
        <>
          <div class="field">
            <label for="destination-header">Header name (a vendor's key, optional)</label>
            <input id="destination-header" value={headerName} onInput={(e) => setHeaderName(e.currentTarget.value)} />
          </div>
          <div class="field">
            <label for="destination-header-value">Header value</label>
            <input id="destination-header-value" type="password" autoComplete="off" value={headerValue} onInput={(e) => setHeaderValue(e.currentTarget.value)} />
          </div>
        </>
      )}
      <div class="field">
        <label for="destination-sample">Share of requests sent (0 to 1)</label>
        <input id="destination-sample" inputMode="decimal" value={sample} onInput={(e) => setSample(e.currentTarget.value)} />
      </div>
      <ErrorNotice error={action.error} />
      <button type="submit" class="primary" disabled={action.busy}>
        Add destination
      </button>
    </form>
  );
}

function DestinationCard({ d, canWrite, onChanged }: { d: Destination; canWrite: boolean; onChanged: () => void }) {
  const action = useAction();
  const [tested, setTested] = useState<{ delivered: boolean; http_status: number | null; error: string | null }>();
  const label = d.name ?? d.url;
  const act = (fn: () => Promise<unknown>) => void action.run(async () => void (await fn())).then((ok) => ok && onChanged());
  return (
    <li class="card">
      <h3>{label}</h3>
      <p class="hint">
        {d.kind} to <code>{d.url}</code>, {Math.round(d.sample_rate * 100)}% of requests{d.header_name ? `, header ${d.header_name} …${d.header_hint ?? ""}` : ""}
        {d.disabled ? "; paused" : ""}
      </p>
      <p>
        Last delivery: {when(d.last_attempt_at)}
        {d.last_http_status ? ` (HTTP ${d.last_http_status})` : ""}
        {d.last_error ? `: ${d.last_error}` : ""}; last success {when(d.last_success_at)}
      </p>
      {tested && (
        <p role="status">
          Test {tested.delivered ? "delivered" : "not delivered"}
          {tested.http_status ? ` (HTTP ${tested.http_status})` : ""}
          {tested.error ? `: ${tested.error}` : ""}
        </p>
      )}
      {canWrite && (
        <div class="row-actions">
          <button
            type="button"
            disabled={action.busy}
            aria-label={`Send test to ${label}`}
            onClick={() => void action.run(async () => setTested(await api.post(`/v1/broadcast/destinations/${d.id}/test`))).then((ok) => ok && onChanged())}
          >
            Send test
          </button>
          <button type="button" disabled={action.busy} aria-label={`${d.disabled ? "Resume" : "Pause"} ${label}`} onClick={() => act(() => api.patch(`/v1/broadcast/destinations/${d.id}`, { disabled: !d.disabled }))}>
            {d.disabled ? "Resume" : "Pause"}
          </button>
          <button type="button" class="danger" disabled={action.busy} aria-label={`Remove ${label}`} onClick={() => confirm(`Remove ${label}?`) && act(() => api.del(`/v1/broadcast/destinations/${d.id}`))}>
            Remove
          </button>
        </div>
      )}
      <ErrorNotice error={action.error} />
    </li>
  );
}

/** Broadcast: every request's record (never its prompt or completion) to your webhook or tracing backend. */
export function BroadcastSection({ can }: { can: Abilities }) {
  const load = useLoad(() => api.get<Destination[]>("/v1/broadcast/destinations"), []);
  const [created, setCreated] = useState<Destination>();
  return (
    <section aria-labelledby="broadcast-heading">
      <h2 id="broadcast-heading">Broadcast</h2>
      <p class="hint">Each completed request's record (model, tokens, cost, timings; never a prompt or a completion) goes to these destinations.</p>
      {created?.signing_secret && (
        <div class="card secret" role="status">
          <p>Signing secret of the new destination: shown this once.</p>
          <code data-testid="destination-secret">{created.signing_secret}</code> <CopyButton text={created.signing_secret} label="Copy the destination's signing secret" />
          <button type="button" onClick={() => setCreated(undefined)}>
            Done
          </button>
        </div>
      )}
      {can.configure && (
        <AddDestination
          onAdded={(d) => {
            setCreated(d);
            load.reload();
          }}
        />
      )}
      <Show load={load} what="destinations">
        {(rows) =>
          rows.length === 0 ? (
            <p class="hint">No destinations.</p>
          ) : (
            <ul class="plain list" data-testid="destinations">
              {rows.map((d) => (
                <DestinationCard key={d.id} d={d} canWrite={can.configure} onChanged={load.reload} />
              ))}
            </ul>
          )
        }
      </Show>
    </section>
  );
}
