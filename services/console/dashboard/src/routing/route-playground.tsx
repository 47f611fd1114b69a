import { useState } from "preact/hooks";
import { api } from "../api/client";
import type { PreviewCandidate, RoutePreview } from "../api/types";
import { ErrorNotice, useAction } from "../ui/async";
import { money } from "../ui/format";
import { Table } from "../ui/table";

const price = (c: PreviewCandidate) => (c.pricing ? `${money(c.pricing.prompt_per_million)} / ${money(c.pricing.completion_per_million)} per million` : "unpriced");

function Result({ r }: { r: RoutePreview }) {
  return (
    <div role="status" data-testid="preview-result">
      {r.would_dispatch ? (
        <p>
          Would go to <strong data-testid="preview-winner">{r.winner ? `${r.winner.provider} (${r.winner.model})` : "none"}</strong>, {r.strategy}, ordered {r.ordering}.
        </p>
      ) : (
        <p class="warning" data-testid="preview-refusal">
          Would be refused ({r.refusal?.status} {r.refusal?.code}): {r.refusal?.message}
        </p>
      )}
      {r.routing_seed && (
        <p>
          Seed: <code data-testid="preview-seed">{r.routing_seed}</code> (send it as routing_seed to get this order again)
        </p>
      )}
      {r.unresolved_models.length > 0 && <p>Not in the catalog: {r.unresolved_models.join(", ")}</p>}
      {r.guardrails.applied.length > 0 && <p>Guardrails applied: {r.guardrails.applied.join(", ")}</p>}
      {r.content_filter && r.content_filter.labels.length > 0 && <p>Content filters matched: {r.content_filter.labels.join(", ")}</p>}
      <Table headers={["#", "Provider", "Model", "List price"]} caption="Cascade, in the order the endpoints would be tried" testId="preview-cascade">
        {r.cascade.map((c, i) => (
          <tr key={c.endpoint_id}>
            <td>{i + 1}</td>
            <td>
              {c.provider}
              {c.pinned ? " (pinned)" : ""}
            </td>
            <td>{c.model}</td>
            <td>{price(c)}</td>
          </tr>
        ))}
      </Table>
      {r.refused.length > 0 && (
        <Table headers={["Provider", "Model", "Refused by"]} caption="Endpoints left out, and why" testId="preview-refused">
          {r.refused.map((x) => (
            <tr key={x.endpoint_id}>
              <td>{x.provider}</td>
              <td>{x.model}</td>
              <td>{x.constraint}</td>
            </tr>
          ))}
        </Table>
      )}
    </div>
  );
}

/**
 * Where a request would go, with no side effect, for the signed-in person: the preview takes the
 * dashboard session and runs the chat route's gates as a chat from this session would (the
 * person's guardrails, the workspace and agent budgets, content filters).
 */
export function RoutePlayground() {
  const [model, setModel] = useState("");
  const [message, setMessage] = useState("");
  const [seed, setSeed] = useState("");
  const [result, setResult] = useState<RoutePreview>();
  const action = useAction();
  const run = async (e: Event) => {
    e.preventDefault();
    const body = {
      model,
      ...(message ? { messages: [{ role: "user", content: message }] } : {}),
      ...(seed ? { routing_seed: seed } : {}),
    };
    await action.run(async () => setResult(await api.post<RoutePreview>("/v1/routing/preview", body)));
  };
  return (
    <section class="card" aria-labelledby="playground-heading">
      <h3 id="playground-heading">Route preview</h3>
      <p class="hint">
        Runs the chat route's checks as a request you send from this dashboard would (your guardrails, the workspace and agent budgets, content filters). Nothing is
        sent to a provider and nothing is recorded.
      </p>
      <form onSubmit={(e) => void run(e)}>
        <div class="field">
          <label for="playground-model">Model</label>
          <input id="playground-model" value={model} onInput={(e) => setModel(e.currentTarget.value)} placeholder="openai/gpt-4o-mini" />
        </div>
        <div class="field">
          <label for="playground-message">Message (optional, for content filters)</label>
          <textarea id="playground-message" rows={2} value={message} onInput={(e) => setMessage(e.currentTarget.value)} />
        </div>
        <div class="field">
          <label for="playground-seed">Routing seed (optional)</label>
          <input id="playground-seed" value={seed} onInput={(e) => setSeed(e.currentTarget.value)} />
        </div>
        <ErrorNotice error={action.error} />
        <button type="submit" class="primary" disabled={action.busy}>
          {action.busy ? "Previewing…" : "Preview route"}
        </button>
      </form>
      {result && <Result r={result} />}
    </section>
  );
}
