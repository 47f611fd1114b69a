import { useState } from "preact/hooks";
import { api } from "../api/client";
import type { Branding } from "../api/types";
import { ErrorNotice, Show, useAction, useLoad } from "../ui/async";

/** A chosen file as a data URI (the API checks it really is a PNG or JPEG under 150 KB). */
function dataUriOf(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    // readAsDataURL always yields a string.
    reader.onload = () => resolve(typeof reader.result === "string" ? reader.result : "");
    reader.onerror = () => reject(new Error("The file could not be read."));
    reader.readAsDataURL(file);
  });
}

function BrandingFields({ saved, canWrite, onSaved }: { saved: Branding; canWrite: boolean; onSaved: () => void }) {
  const [name, setName] = useState(saved.brand_name ?? "");
  const [footer, setFooter] = useState(saved.brand_footer ?? "");
  // Undefined keeps the saved logo; null removes it. The client's report draws the saved one.
  const [logo, setLogo] = useState<string | null | undefined>(undefined);
  const action = useAction();
  const save = async (e: Event) => {
    e.preventDefault();
    const body = { brand_name: name, brand_footer: footer, brand_logo: logo === undefined ? saved.brand_logo : logo };
    if (await action.run(async () => void (await api.put("/v1/reports/branding", body)))) onSaved();
  };
  return (
    <form class="card" onSubmit={(e) => void save(e)} aria-labelledby="branding-heading">
      <h3 id="branding-heading">Report branding</h3>
      <p class="hint">Shown on client reports instead of {saved.org_name ?? "your organisation's name"}.</p>
      <fieldset disabled={!canWrite} class="plain-fieldset">
        <div class="field">
          <label for="brand-name">Brand name</label>
          <input id="brand-name" value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </div>
        <div class="field">
          <label for="brand-footer">Footer</label>
          <textarea id="brand-footer" rows={2} value={footer} onInput={(e) => setFooter(e.currentTarget.value)} />
        </div>
        <div class="field">
          <label for="brand-logo">Logo (PNG or JPEG, under 150 KB)</label>
          <input
            id="brand-logo"
            type="file"
            accept="image/png,image/jpeg"
            onChange={(e) => {
              const file = e.currentTarget.files?.[0];
              if (file) void action.run(async () => setLogo(await dataUriOf(file)));
            }}
          />
          <p class="hint" data-testid="logo-state">
            {logo ? "A new logo is chosen; save to use it." : logo === null || !saved.brand_logo ? "No logo." : "A logo is saved."}
          </p>
          {canWrite && (logo ?? saved.brand_logo) && (
            <button type="button" onClick={() => setLogo(null)}>
              Remove logo
            </button>
          )}
        </div>
      </fieldset>
      <ErrorNotice error={action.error} />
      {canWrite && (
        <button type="submit" class="primary" disabled={action.busy}>
          Save branding
        </button>
      )}
    </form>
  );
}

export function BrandingPanel({ canWrite }: { canWrite: boolean }) {
  const load = useLoad(() => api.get<Branding>("/v1/reports/branding"), []);
  return <Show load={load} what="report branding">{(b) => <BrandingFields key={JSON.stringify(b)} saved={b} canWrite={canWrite} onSaved={load.reload} />}</Show>;
}
