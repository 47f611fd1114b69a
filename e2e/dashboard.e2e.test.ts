import { createHash, randomBytes } from "node:crypto";
import { Wallet } from "ethers";
import type { Browser as Chromium, BrowserContext, Page } from "playwright-core";
import {
  accessibilityViolations,
  Browser,
  gatewayClient,
  launchChromium,
  screenshot,
  startFakeOpenAi,
  startStack,
  waitFor,
  type FakeUpstream,
  type Stack,
} from "@router/testkit";

const MODEL = "openai/gpt-4o-mini";
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 900 };

/**
 * The dashboard in a real browser (Debian's Chromium through playwright-core) against the
 * separate-process stack: gateway, routing, ledger and activity on Postgres and the Redis bus, with a
 * fake OpenAI upstream. Everything the pages do goes through the public API with the session cookie
 * and the CSRF header. Each page is checked with axe and photographed into test-artifacts/dashboard.
 */
describe("the dashboard in a browser", () => {
  let stack: Stack;
  let openai: FakeUpstream;
  let chromium: Chromium;
  let org: { orgId: string; managementKey: string };
  let owner: BrowserContext;
  let page: Page;
  const cspViolations: string[] = [];

  /** A context that records Content-Security-Policy violations (the policy must never have to block anything). */
  async function newContext(viewport = DESKTOP): Promise<BrowserContext> {
    const context = await chromium.newContext({ baseURL: stack.gatewayUrl, viewport });
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: stack.gatewayUrl });
    context.on("console", (msg) => {
      if (/Content Security Policy/i.test(msg.text())) cspViolations.push(msg.text());
    });
    return context;
  }

  async function expectAccessible(p: Page, name: string): Promise<void> {
    await screenshot(p, name);
    expect(await accessibilityViolations(p)).toEqual([]);
  }

  beforeAll(async () => {
    openai = await startFakeOpenAi();
    stack = await startStack({ providerBaseUrls: { openai: openai.url } });
    org = await stack.createOrg("Dashboard Co");
    chromium = await launchChromium();
    owner = await newContext();
    page = await owner.newPage();
  }, 120_000);

  afterAll(async () => {
    await chromium?.close();
    await stack?.stop();
    await openai?.close();
  });

  afterEach(() => {
    expect(cspViolations).toEqual([]);
  });

  it("serves the pages with a strict Content-Security-Policy that reports to the gateway's CSP route", async () => {
    const res = await fetch(`${stack.gatewayUrl}/signin`);
    expect(res.status).toBe(200);
    const csp = res.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).not.toContain("unsafe-inline");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("report-uri /csp-report");
    expect(res.headers.get("reporting-endpoints")).toBe('csp="/csp-report"');
    const html = await res.text();
    // No inline script or style: every script and stylesheet is a file.
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/<style|style="/);
    const asset = /src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect((await fetch(`${stack.gatewayUrl}${asset}`)).headers.get("cache-control")).toContain("immutable");
    expect((await fetch(`${stack.gatewayUrl}/assets/missing.js`)).status).toBe(404);
  });

  it("explains a failed identity-provider sign-in in words, and sends a visitor without a session to /signin", async () => {
    await page.goto("/signin?error=state_mismatch");
    await expect(page.getByRole("alert").textContent()).resolves.toContain("could not be matched to one started in this browser");
    await page.goto("/workspace");
    await page.waitForURL(/\/signin\?next=%2Fworkspace/);
    // A well-formed key that was never issued.
    await page.getByLabel("Management key").fill(`${org.managementKey.slice(0, -4)}0000`);
    await page.getByRole("button", { name: "Sign in with key" }).click();
    await expect(page.getByRole("alert").textContent()).resolves.toContain("unknown, revoked or expired management key");
    await expectAccessible(page, "signin");
  });

  it("signs in by exchanging a management key and lands on the workspace", async () => {
    await page.getByLabel("Management key").fill(org.managementKey);
    await page.getByRole("button", { name: "Sign in with key" }).click();
    await page.waitForURL(/\/workspace$/);
    await expect(page.getByTestId("role").textContent()).resolves.toBe("Owner");
    const cookies = await owner.cookies();
    expect(cookies.find((c) => c.name === "rt_session")?.httpOnly).toBe(true);
  });

  let inferenceKey = "";

  it("adds a provider key and creates a key whose secret is shown once, with a copy button", async () => {
    await page.getByRole("link", { name: "Provider keys" }).click();
    await page.getByLabel("API key").fill("sk-openai-dashboard-0001");
    await page.getByLabel("Name (optional)").fill("main");
    await page.getByRole("button", { name: "Add provider key" }).click();
    await page.getByRole("heading", { name: "openai: main" }).waitFor();
    await expectAccessible(page, "provider-keys");

    await page.getByRole("link", { name: "Keys", exact: true }).click();
    await page.getByLabel("Name", { exact: true }).fill("dash-app");
    await page.getByRole("button", { name: "Create key" }).click();
    inferenceKey = (await page.getByTestId("new-key").textContent()) ?? "";
    expect(inferenceKey).toMatch(/^rt-v1-/);
    await page.getByRole("button", { name: "Copy the new key" }).click();
    await page.getByText("Copied").waitFor();
    // Page code as text: the test program has no DOM types.
    expect(await page.evaluate("navigator.clipboard.readText()")).toBe(inferenceKey);
    await expectAccessible(page, "keys-created");
    // Once: after a reload only the listing remains, never the secret.
    await page.reload();
    await page.getByRole("heading", { name: "dash-app" }).waitFor();
    expect(await page.content()).not.toContain(inferenceKey);
  });

  it("shows a completion in recent requests and in the chart, and opens it with its dispatches", async () => {
    const client = gatewayClient(stack.gatewayUrl, inferenceKey);
    const done = await client.post("/v1/chat/completions", { model: MODEL, max_tokens: 8, messages: [{ role: "user", content: "hi" }] });
    expect(done.status).toBe(200);
    await page.getByRole("link", { name: "Activity" }).click();
    await waitFor(
      async () => {
        await page.reload();
        await page.getByTestId("total-requests").waitFor();
        return (await page.getByTestId("total-requests").textContent()) === "1";
      },
      { timeoutMs: 20_000, intervalMs: 500, what: "the completion to reach the activity totals" },
    );
    const today = new Date().toISOString().slice(0, 10);
    await expect(page.getByTestId(`requests-${today}`).textContent()).resolves.toBe("1");
    const rows = page.getByTestId("requests").locator("tbody tr");
    await expect(rows.count()).resolves.toBe(1);
    await expect(rows.first().textContent()).resolves.toContain("gpt-4o-mini");
    await expect(page.getByRole("link", { name: /Export .* as CSV/ }).getAttribute("href")).resolves.toMatch(/^\/v1\/activity\/export\?month=\d{4}-\d{2}$/);

    await page.getByRole("button", { name: new RegExp(`open request ${done.json.id as string}$`) }).click();
    const detail = page.getByRole("region", { name: `Request ${done.json.id as string}` });
    await detail.getByRole("heading", { name: "Dispatches" }).waitFor();
    await expect(detail.locator("tbody tr").first().textContent()).resolves.toContain("openai (your key)");
    await expectAccessible(page, "activity");
    await page.setViewportSize(PHONE);
    await screenshot(page, "activity-phone");
    await page.setViewportSize(DESKTOP);

    // Filters go to the API: a provider nobody used lists nothing.
    await page.getByLabel("Provider").fill("anthropic");
    await page.getByRole("button", { name: "Filter" }).click();
    await page.getByText("No requests in this window.").waitFor();
  });

  it("keeps a refused ceiling's values and shows the API's message, then a saved ceiling refuses the next request", async () => {
    await page.getByRole("link", { name: "Keys", exact: true }).click();
    await page.getByRole("button", { name: "Change the ceiling of dash-app" }).click();
    const limit = page.getByLabel("Spend ceiling (USD, empty for none)").last();
    await limit.fill("ten dollars");
    await page.getByRole("button", { name: "Save ceiling" }).click();
    await expect(page.getByRole("alert").textContent()).resolves.toContain("limit");
    await expect(limit.inputValue()).resolves.toBe("ten dollars");

    await limit.fill("0");
    await page.getByLabel("Count requests served on your provider keys (at list price)").last().check();
    await page.getByRole("button", { name: "Save ceiling" }).click();
    await page.getByText("Ceiling: $0.00 lifetime (hard, provider keys counted)").waitFor();
    const refused = await gatewayClient(stack.gatewayUrl, inferenceKey).post("/v1/chat/completions", {
      model: MODEL,
      max_tokens: 8,
      messages: [{ role: "user", content: "hi" }],
    });
    expect(refused.status).toBe(403);
    expect(refused.json.error.code).toBe("budget_exceeded");

    await page.getByRole("button", { name: "Pause dash-app" }).click();
    await page.getByText("Paused").first().waitFor();
    await page.getByRole("button", { name: "Resume dash-app" }).click();
    await page.getByRole("button", { name: "Pause dash-app" }).waitFor();
  });

  it("sets a workspace budget", async () => {
    await page.getByRole("link", { name: "Workspaces" }).click();
    await page.getByLabel("Limit (USD)").first().fill("25");
    await page.getByRole("button", { name: "Set budget" }).first().click();
    await page.getByText("monthly: $25.00").waitFor();
    await expectAccessible(page, "workspaces");
  });

  it("approves a PKCE app on the consent screen, and the app exchanges its code for a key", async () => {
    const verifier = randomBytes(32).toString("base64url");
    const challenge = createHash("sha256").update(verifier).digest("base64url");
    const callback = "http://localhost:4999/callback?state=app-own";
    // The app's own page is not running: the browser's arrival there is caught and answered here.
    await page.route("http://localhost:4999/**", (route) => route.fulfill({ status: 200, contentType: "text/html", body: "<title>app</title>" }));

    await page.goto(`/auth?callback_url=${encodeURIComponent(callback)}&code_challenge=${challenge}&code_challenge_method=plain`);
    await expect(page.getByRole("alert").textContent()).resolves.toContain("S256");
    await expect(page.getByRole("button", { name: "Approve" }).count()).resolves.toBe(0);

    await page.goto(`/auth?callback_url=${encodeURIComponent(callback)}&code_challenge=${challenge}&code_challenge_method=S256`);
    await page.getByRole("heading", { name: "localhost" }).waitFor();
    await expect(page.locator("dl.facts").textContent()).resolves.toContain("30 days");
    await expectAccessible(page, "consent");
    await page.getByRole("button", { name: "Approve" }).click();
    await page.waitForURL(/^http:\/\/localhost:4999\/callback\?/);
    const back = new URL(page.url());
    expect(back.searchParams.get("state")).toBe("app-own");
    const code = back.searchParams.get("code") ?? "";

    const exchanged = await fetch(`${stack.gatewayUrl}/v1/auth/keys`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ code, code_verifier: verifier, code_challenge_method: "S256" }),
    });
    expect(exchanged.status).toBe(200);
    const issued = (await exchanged.json()) as { data: { key: string; limit: number } };
    expect(issued.data.key).toMatch(/^rt-v1-/);
    expect(issued.data.limit).toBe(10);
  });

  it("lands an invited Finance member on the invitation, and shows them a workspace they cannot change", async () => {
    const invited = await gatewayClient(stack.gatewayUrl, org.managementKey).post("/v1/organization/invitations", { role: "billing" });
    expect(invited.status).toBe(201);
    const url = new URL(invited.json.data.url as string);
    // The person signs in with a wallet (a real signature) in a cookie jar; the session moves into the browser.
    const person = new Browser(stack.gatewayUrl);
    const wallet = Wallet.createRandom();
    const challenge = await person.post("/v1/auth/wallet/challenge", { address: wallet.address });
    const { message, nonce } = challenge.body.data as { message: string; nonce: string };
    expect((await person.post("/v1/auth/wallet/verify", { address: wallet.address, signature: await wallet.signMessage(message), nonce })).status).toBe(200);
    const finance = await newContext(PHONE);
    for (const name of ["rt_session", "rt_csrf"]) await finance.addCookies([{ name, value: (await person.cookie(name)) ?? "", url: stack.gatewayUrl }]);
    const p = await finance.newPage();

    await p.goto(`/invite${url.hash}`);
    await p.getByText("You are invited to join Dashboard Co as Finance.").waitFor();
    await expectAccessible(p, "invitation");
    await p.getByRole("button", { name: /^Accept as/ }).click();
    await p.waitForURL(/\/workspace$/);
    await expect(p.getByTestId("role").textContent()).resolves.toBe("Finance");
    await p.getByTestId("total-requests").waitFor();
    await expect(p.getByRole("link", { name: /Export .* as CSV/ }).count()).resolves.toBe(1);
    await expectAccessible(p, "workspace-finance-phone");

    await p.getByRole("link", { name: "Keys", exact: true }).click();
    await p.getByRole("heading", { name: "dash-app" }).waitFor();
    await expect(p.getByRole("button", { name: "Create key" }).count()).resolves.toBe(0);
    await expect(p.getByRole("button", { name: /^Revoke/ }).count()).resolves.toBe(0);
    // The API refuses the write as well: the page hid nothing the server would have allowed.
    const status = await p.evaluate(`(async () => {
      const csrf = /rt_csrf=([^;]+)/.exec(document.cookie)?.[1] ?? "";
      const res = await fetch("/v1/keys", { method: "POST", headers: { "content-type": "application/json", "x-csrf-token": csrf }, body: '{"name":"x"}' });
      return res.status;
    })()`);
    expect(status).toBe(403);
    await finance.close();
  });

  it("signs out", async () => {
    await page.goto("/workspace");
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL(/\/signin/);
    await page.goto("/workspace");
    await page.waitForURL(/\/signin\?next=/);
  });
});
