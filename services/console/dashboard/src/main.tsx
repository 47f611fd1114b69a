import { render } from "preact";
import { api } from "./api/client";
import type { Session } from "./api/types";
import { ConsentPage } from "./consent/consent-page";
import { InvitationPage, SignInPage } from "./signin/sign-in-page";
import { WorkspacePage } from "./workspace/workspace-page";
import "./styles.css";

/** One bundle for the four page routes the gateway serves; the path picks the page. */
async function start(root: HTMLElement): Promise<void> {
  const path = location.pathname.replace(/\/+$/, "");
  if (path === "/invite") return render(<InvitationPage />, root);
  if (path === "/signin") return render(<SignInPage />, root);
  const session = await api.get<Session>("/v1/auth/session").catch(() => undefined);
  if (path === "/auth") return render(<ConsentPage signedIn={session !== undefined} />, root);
  if (!session) {
    location.replace(`/signin?next=${encodeURIComponent(location.pathname + location.search + location.hash)}`);
    return;
  }
  render(<WorkspacePage session={session} />, root);
}

const root = document.getElementById("app");
if (root) void start(root);
