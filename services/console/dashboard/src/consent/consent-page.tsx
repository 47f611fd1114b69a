import { api, query } from "../api/client";
import type { PkceApproval, PkceDescription } from "../api/types";
import { ErrorNotice, Show, useAction, useLoad } from "../ui/async";
import { money, when } from "../ui/format";
import { useState } from "preact/hooks";
import { CopyButton } from "../ui/copy-button";

const PARAMS = ["callback_url", "code_challenge", "code_challenge_method", "key_label"] as const;

/**
 * `/auth`: the consent screen of the OAuth PKCE flow. The request is described by the public
 * describe route first (which refuses what it refuses: the page then shows that refusal and nothing
 * to approve); approving mints the one-time code and sends the browser back to the app.
 */
export function ConsentPage({ signedIn }: { signedIn: boolean }) {
  const search = new URLSearchParams(location.search);
  const params: Record<string, string | undefined> = {};
  for (const p of PARAMS) params[p] = search.get(p) ?? undefined;
  const described = useLoad(() => api.get<PkceDescription>(`/v1/auth/pkce${query(params)}`), [location.search]);
  const action = useAction();
  const [headlessCode, setHeadlessCode] = useState<PkceApproval>();
  const [denied, setDenied] = useState(false);

  const approve = async () => {
    await action.run(async () => {
      const approval = await api.post<PkceApproval>("/v1/auth/pkce/approve", params);
      if (approval.redirect_to) location.assign(approval.redirect_to);
      else setHeadlessCode(approval);
    });
  };
  const deny = (d: PkceDescription) => {
    if (d.callback_url) {
      const back = new URL(d.callback_url);
      back.searchParams.set("error", "access_denied");
      location.assign(back.toString());
    } else setDenied(true);
  };

  return (
    <main class="narrow">
      <h1>Authorise an app</h1>
      <Show load={described} what="the app's request">
        {(d) => (
          <section class="card" aria-labelledby="app-heading">
            <h2 id="app-heading">{d.headless ? `“${d.key_label}” (an app without a web page)` : d.host}</h2>
            <p>This app asks for its own API key on your organisation:</p>
            <dl class="facts">
              <dt>Key name</dt>
              <dd>{d.key_label}</dd>
              <dt>Spend ceiling</dt>
              <dd>{money(d.limit)} over the key's lifetime, then refused</dd>
              <dt>Lifetime</dt>
              <dd>{d.expires_in_days} days, then it stops working</dd>
              <dt>Sends you back to</dt>
              <dd>{d.callback_url ?? "nowhere: you copy a code into the app"}</dd>
            </dl>
            <p class="hint">You can revoke the key at any time under Keys.</p>
            {headlessCode ? (
              <div class="secret" role="status">
                <p>Give this one-time code to the app (it expires {when(headlessCode.expires_at)}):</p>
                <code id="headless-code">{headlessCode.code}</code> <CopyButton text={headlessCode.code} label="Copy the code" />
              </div>
            ) : denied ? (
              <p role="status">Denied. No key was made; you can close this page.</p>
            ) : !signedIn ? (
              <p>
                <a class="button primary" href={`/signin?next=${encodeURIComponent(location.pathname + location.search)}`}>
                  Sign in to approve
                </a>
              </p>
            ) : (
              <>
                <ErrorNotice error={action.error} />
                <div class="actions">
                  <button type="button" class="primary" disabled={action.busy} onClick={() => void approve()}>
                    {action.busy ? "Approving…" : "Approve"}
                  </button>
                  <button type="button" disabled={action.busy} onClick={() => deny(d)}>
                    Deny
                  </button>
                </div>
              </>
            )}
          </section>
        )}
      </Show>
    </main>
  );
}
