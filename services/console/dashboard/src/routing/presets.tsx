import { useState } from "preact/hooks";
import { api } from "../api/client";
import type { Preset, PresetVersion } from "../api/types";
import { ErrorNotice, Show, useAction, useLoad } from "../ui/async";
import { when } from "../ui/format";
import { jsonOf } from "../ui/json-input";

const pretty = (body: unknown) => JSON.stringify(body, null, 2);

function CreatePreset({ onCreated }: { onCreated: () => void }) {
  const [slug, setSlug] = useState("");
  const [name, setName] = useState("");
  const [body, setBody] = useState('{\n  "model": "openai/gpt-4o-mini",\n  "temperature": 0.2\n}');
  const action = useAction();
  const [dropped, setDropped] = useState<string[]>([]);
  const create = async (e: Event) => {
    e.preventDefault();
    const ok = await action.run(async () => {
      const created = await api.post<Preset & { dropped: string[] }>("/v1/presets", { slug, name, body: jsonOf(body) });
      setDropped(created.dropped);
    });
    if (ok) {
      setSlug("");
      setName("");
      onCreated();
    }
  };
  return (
    <form class="card" onSubmit={(e) => void create(e)} aria-labelledby="new-preset-heading">
      <h4 id="new-preset-heading">New preset</h4>
      <div class="field">
        <label for="preset-slug">Slug</label>
        <input id="preset-slug" value={slug} onInput={(e) => setSlug(e.currentTarget.value)} required />
      </div>
      <div class="field">
        <label for="preset-name">Preset name</label>
        <input id="preset-name" value={name} onInput={(e) => setName(e.currentTarget.value)} required />
      </div>
      <div class="field">
        <label for="preset-body">Settings (JSON)</label>
        <textarea id="preset-body" rows={5} value={body} onInput={(e) => setBody(e.currentTarget.value)} />
      </div>
      <ErrorNotice error={action.error} />
      {dropped.length > 0 && <p role="status">Not settings, so not kept: {dropped.join(", ")}</p>}
      <button type="submit" class="primary" disabled={action.busy}>
        Create preset
      </button>
    </form>
  );
}

/** A preset's versions, newest first, with a new version and revert for writers. */
function PresetHistory({ slug, canWrite, onChanged }: { slug: string; canWrite: boolean; onChanged: () => void }) {
  const load = useLoad(() => api.get<Preset & { versions: PresetVersion[] }>(`/v1/presets/${encodeURIComponent(slug)}`), [slug]);
  const [body, setBody] = useState<string>();
  const [note, setNote] = useState("");
  const action = useAction();
  const changed = () => {
    load.reload();
    onChanged();
  };
  const saveVersion = async (e: Event, current: Preset) => {
    e.preventDefault();
    const ok = await action.run(async () => void (await api.post(`/v1/presets/${encodeURIComponent(slug)}/versions`, { body: jsonOf(body ?? pretty(current.body)), note: note || undefined })));
    if (ok) {
      setBody(undefined);
      setNote("");
      changed();
    }
  };
  const revert = (version: number) =>
    void action.run(async () => void (await api.post(`/v1/presets/${encodeURIComponent(slug)}/revert`, { version }))).then((ok) => ok && changed());
  return (
    <Show load={load} what="the preset's versions">
      {(p) => (
        <>
          <ol class="plain" data-testid={`versions-${slug}`}>
            {p.versions.map((v) => (
              <li key={v.version}>
                Version {v.version}
                {v.version === p.version ? " (current)" : ""}, {when(v.created_at)}
                {v.note ? `: ${v.note}` : ""} <code>{JSON.stringify(v.body)}</code>{" "}
                {canWrite && v.version !== p.version && (
                  <button type="button" class="link" disabled={action.busy} onClick={() => revert(v.version)} aria-label={`Revert ${slug} to version ${v.version}`}>
                    Revert
                  </button>
                )}
              </li>
            ))}
          </ol>
          {canWrite && (
            <form onSubmit={(e) => void saveVersion(e, p)}>
              <div class="field">
                <label for={`version-body-${slug}`}>New version of {slug} (JSON)</label>
                <textarea id={`version-body-${slug}`} rows={4} value={body ?? pretty(p.body)} onInput={(e) => setBody(e.currentTarget.value)} />
              </div>
              <div class="field">
                <label for={`version-note-${slug}`}>Note (optional)</label>
                <input id={`version-note-${slug}`} value={note} onInput={(e) => setNote(e.currentTarget.value)} />
              </div>
              <button type="submit" disabled={action.busy}>
                Save version
              </button>
            </form>
          )}
          <ErrorNotice error={action.error} />
        </>
      )}
    </Show>
  );
}

function PresetCard({ p, canWrite, onChanged }: { p: Preset; canWrite: boolean; onChanged: () => void }) {
  const [open, setOpen] = useState(false);
  const action = useAction();
  return (
    <li class="card">
      <h4>
        {p.name} <code>{p.reference}</code>
      </h4>
      <p class="hint">
        Version {p.version}, changed {when(p.updated_at)}
      </p>
      <div class="row-actions">
        <button type="button" onClick={() => setOpen(!open)} aria-expanded={open} aria-label={`Versions of ${p.slug}`}>
          Versions
        </button>
        {canWrite && (
          <button
            type="button"
            class="danger"
            disabled={action.busy}
            aria-label={`Delete preset ${p.slug}`}
            onClick={() => {
              if (confirm(`Delete ${p.reference}? Requests naming it are refused from then on.`))
                void action.run(async () => void (await api.del(`/v1/presets/${encodeURIComponent(p.slug)}`))).then((ok) => ok && onChanged());
            }}
          >
            Delete
          </button>
        )}
      </div>
      <ErrorNotice error={action.error} />
      {open && <PresetHistory slug={p.slug} canWrite={canWrite} onChanged={onChanged} />}
    </li>
  );
}

export function PresetsPanel({ canWrite }: { canWrite: boolean }) {
  const load = useLoad(() => api.get<Preset[]>("/v1/presets"), []);
  return (
    <section aria-labelledby="presets-heading">
      <h3 id="presets-heading">Presets</h3>
      <p class="hint">Named, versioned request settings: a request uses one as its model, @preset/slug.</p>
      {canWrite && <CreatePreset onCreated={load.reload} />}
      <Show load={load} what="presets">
        {(presets) =>
          presets.length === 0 ? (
            <p class="hint">No presets.</p>
          ) : (
            <ul class="plain list" data-testid="presets">
              {presets.map((p) => (
                <PresetCard key={p.slug} p={p} canWrite={canWrite} onChanged={load.reload} />
              ))}
            </ul>
          )
        }
      </Show>
    </section>
  );
}
