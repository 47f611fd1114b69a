import { useState } from "preact/hooks";
import { api } from "../api/client";
import type { InvitationLookup, Session, SignInMethods } from "../api/types";
import { ErrorNotice, Show, useAction, useLoad } from "../ui/async";
import { when } from "../ui/format";
import { PROVIDER_NAMES, SIGN_IN_FAILURES } from "./failure-reasons";
import { WalletSignIn } from "./wallet-sign-in";

/** Where to go once signed in: `?next=` when it is a page of this site, else the workspace. */
function nextPage(): string {
  const next = new URLSearchParams(location.search).get("next");
  return next && next.startsWith("/") && !next.startsWith("//") ? next : "/workspace";
}

function KeyExchange({ onSignedIn }: { onSignedIn: () => void }) {
  const [key, setKey] = useState("");
  const action = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    if (await action.run(async () => void (await api.post<Session>("/v1/auth/exchange", { key: key.trim() })))) onSignedIn();
  };
  return (
    <form onSubmit={(e) => void submit(e)} class="card">
      <h2>Management key</h2>
      <label for="mgmt-key">Management key</label>
      <input id="mgmt-key" type="password" autoComplete="off" placeholder="rt-mgmt-…" value={key} onInput={(e) => setKey(e.currentTarget.value)} required />
      <p class="hint">The key stays in this browser's request; the session it opens ends when the key is revoked.</p>
      <ErrorNotice error={action.error} />
      <button type="submit" class="primary" disabled={action.busy}>
        {action.busy ? "Signing in…" : "Sign in with key"}
      </button>
    </form>
  );
}

/** The methods this deployment offers, each signing in and then going on. */
function SignInOptions({ invitation }: { invitation?: string }) {
  const methods = useLoad(() => api.get<SignInMethods>("/v1/auth/methods"), []);
  // Back to the invitation after signing in (a full load, so the fragment is read again).
  const done = () => (invitation ? location.reload() : location.assign(nextPage()));
  return (
    <Show load={methods} what="sign-in methods">
        {(m) => (
          <>
            {m.oauth.length > 0 && (
              <section class="card" aria-labelledby="idp-heading">
                <h2 id="idp-heading">Identity provider</h2>
                <ul class="plain">
                  {m.oauth.map((slug) => (
                    <li key={slug}>
                      <a class="button" href={`/v1/auth/oauth/${encodeURIComponent(slug)}/start`}>
                        Continue with {PROVIDER_NAMES[slug] ?? slug}
                      </a>
                    </li>
                  ))}
                </ul>
              </section>
            )}
            {m.wallet && <WalletSignIn onSignedIn={done} />}
            {m.management_key && !invitation && <KeyExchange onSignedIn={done} />}
          </>
        )}
      </Show>
  );
}

export function SignInPage() {
  const reason = new URLSearchParams(location.search).get("error");
  return (
    <main class="narrow">
      <h1>Sign in to Router</h1>
      {reason && (
        <p class="error" role="alert">
          {SIGN_IN_FAILURES[reason] ?? "Sign-in did not happen. Start again."}
        </p>
      )}
      <SignInOptions />
    </main>
  );
}

/** `/invite#token=...`: what the invitation is for; accept once signed in. The token never leaves the fragment except in a POST body. */
export function InvitationPage() {
  const token = new URLSearchParams(location.hash.slice(1)).get("token") ?? "";
  const lookup = useLoad(() => api.post<InvitationLookup>("/v1/invitations/lookup", { token }), [token]);
  const session = useLoad(() => api.get<Session>("/v1/auth/session").catch(() => null), []);
  const action = useAction();
  const accept = async () => {
    if (await action.run(async () => void (await api.post("/v1/invitations/accept", { token })))) location.assign("/workspace");
  };
  return (
    <main class="narrow">
      <h1>Invitation</h1>
      <Show load={lookup} what="the invitation">
        {(inv) => (
          <section class="card">
            <p>
              You are invited to join <strong>{inv.org_name ?? "an organisation"}</strong> as <strong>{inv.role_name}</strong>.
            </p>
            <p class="hint">The link works once and expires {when(inv.expires_at)}.</p>
            <Show load={session} what="your session">
              {(s) =>
                s?.user ? (
                  <>
                    <ErrorNotice error={action.error} />
                    <button type="button" class="primary" disabled={action.busy} onClick={() => void accept()}>
                      {action.busy ? "Accepting…" : `Accept as ${s.user.name ?? s.user.email ?? "yourself"}`}
                    </button>
                  </>
                ) : (
                  <>
                    <p>Sign in as a person (identity provider or wallet) to accept; a management key holds no seat.</p>
                    <SignInOptions invitation={token} />
                  </>
                )
              }
            </Show>
          </section>
        )}
      </Show>
    </main>
  );
}
