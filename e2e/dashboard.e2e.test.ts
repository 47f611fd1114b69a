import { createHash, randomBytes } from "node:crypto";
import { Wallet } from "ethers";
import type { Browser as Chromium, BrowserContext, Locator, Page } from "playwright-core";
import {
  accessibilityViolations,
  Browser,
  gatewayClient,
  launchChromium,
  screenshot,
  startFakeOpenAi,
  startHttpsReceiver,
  startStack,
  waitFor,
  type FakeUpstream,
  type HttpsReceiver,
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
  /** Stands in for a team's webhook receiver (alert channels). */
  let receiver: HttpsReceiver;
  let chromium: Chromium;
  let org: { orgId: string; managementKey: string };
  let owner: BrowserContext;
  let page: Page;
  const cspViolations: string[] = [];

  /** A context that records Content-Security-Policy violations (the policy must never have to block anything). */
  async function newContext(viewport = DESKTOP): Promise<BrowserContext> {
    const context = await chromium.newContext({ baseURL: stack.gatewayUrl, viewport });
    // Below the test's own timeout, so a missing element names itself instead of timing the test out.
    context.setDefaultTimeout(10_000);
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

  /** A person signed in with a wallet (a real signature) in a cookie jar of their own. */
  async function walletPerson(): Promise<Browser> {
    const person = new Browser(stack.gatewayUrl);
    const wallet = Wallet.createRandom();
    const challenge = await person.post("/v1/auth/wallet/challenge", { address: wallet.address });
    const { message, nonce } = challenge.body.data as { message: string; nonce: string };
    expect((await person.post("/v1/auth/wallet/verify", { address: wallet.address, signature: await wallet.signMessage(message), nonce })).status).toBe(200);
    return person;
  }

  /** Reloads `p` until `check` holds once `ready` shows: what the bus carries (activity, agents) arrives after the response. */
  async function reloadUntil(p: Page, ready: Locator, check: () => Promise<boolean>, what: string): Promise<void> {
    await waitFor(
      async () => {
        await p.reload();
        await ready.waitFor();
        return check();
      },
      { timeoutMs: 20_000, intervalMs: 500, what },
    );
  }

  beforeAll(async () => {
    openai = await startFakeOpenAi();
    receiver = await startHttpsReceiver();
    stack = await startStack({
      providerBaseUrls: { openai: openai.url },
      extraEnv: { ROUTER_OUTBOUND_ALLOW_HOSTS: "127.0.0.1", ROUTER_OUTBOUND_CA_FILE: receiver.caFile },
    });
    org = await stack.createOrg("Dashboard Co");
    chromium = await launchChromium();
    owner = await newContext();
    page = await owner.newPage();
  }, 120_000);

  afterAll(async () => {
    await chromium?.close();
    await stack?.stop();
    await openai?.close();
    await receiver?.close();
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

  it("adds an Azure OpenAI resource with its region and deployments, shows where it points, and names a wrong field", async () => {
    await page.getByRole("link", { name: "Provider keys" }).click();
    await page.getByLabel("Provider", { exact: true }).selectOption("azure");
    await page.getByLabel("Resource endpoint").fill("https://contoso-eu.openai.azure.com");
    await page.getByLabel("Region", { exact: true }).fill("swedencentral");
    await page.getByLabel("Deployments, one per line: model = deployment").fill("openai/gpt-4o-mini = mini-prod\nopenai/gpt-4o = 4o-prod");
    await page.getByLabel("Resource key").fill("azure-dashboard-key-00001234");
    await page.getByLabel("Name (optional)").fill("EU resource");
    await page.getByRole("button", { name: "Add provider key" }).click();
    await page.getByRole("heading", { name: "azure: EU resource" }).waitFor();
    await page.getByText("swedencentral · https://contoso-eu.openai.azure.com").waitFor();
    expect(await page.content()).not.toContain("azure-dashboard-key-00001234");

    await page.getByLabel("Provider", { exact: true }).selectOption("azure");
    await page.getByLabel("Resource endpoint").fill("https://metadata.internal");
    await page.getByLabel("Region", { exact: true }).fill("swedencentral");
    await page.getByLabel("Deployments, one per line: model = deployment").fill("openai/gpt-4o-mini = mini-prod");
    await page.getByLabel("Resource key").fill("azure-dashboard-key-00005678");
    await page.getByRole("button", { name: "Add provider key" }).click();
    await page.getByText(/azure\.endpoint/).waitFor();
    await expectAccessible(page, "provider-keys-cloud");

    // Deleted again from its row: the completions of the next tests go to the fake OpenAI, not to this resource.
    page.once("dialog", (d) => void d.accept());
    await page.getByRole("button", { name: "Delete azure key EU resource" }).click();
    await page.getByRole("heading", { name: "azure: EU resource" }).waitFor({ state: "detached" });
    const left = await gatewayClient(stack.gatewayUrl, org.managementKey).get("/v1/provider-keys");
    expect(left.json.data.map((c: Record<string, unknown>) => c.provider_slug)).toEqual(["openai"]);
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

    await expectAccessible(page, "activity");
    await page.setViewportSize(PHONE);
    await screenshot(page, "activity-phone");
    await page.setViewportSize(DESKTOP);

    // Each row is a real link to the request's own page (its own address).
    const link = page.getByRole("link", { name: new RegExp(`open request ${done.json.id as string}$`) });
    await expect(link.getAttribute("href")).resolves.toBe(`#activity/requests/${done.json.id as string}`);
    await link.click();
    await page.waitForURL(new RegExp(`#activity/requests/${done.json.id as string}$`));
    const detail = page.getByRole("region", { name: `Request ${done.json.id as string}` });
    await detail.getByRole("heading", { name: "Dispatches" }).waitFor();
    await expect(detail.getByTestId("dispatches").locator("tbody tr").first().textContent()).resolves.toContain("openai (your key)");
    await expectAccessible(page, "request-detail");
    await page.getByRole("link", { name: "← Activity" }).click();

    // Filters go to the API: a provider nobody used lists nothing.
    await page.getByLabel("Provider", { exact: true }).fill("anthropic");
    await page.getByRole("button", { name: "Filter" }).click();
    await page.getByText("No requests in this window.").waitFor();
  });

  /** Nothing wider than the viewport: no sideways scroll of the whole page (tables scroll in their own box). */
  async function expectNoSidewaysScroll(p: Page): Promise<void> {
    expect(await p.evaluate("document.documentElement.scrollWidth <= window.innerWidth")).toBe(true);
  }

  it("reads at a glance: charts with axes and hover values, breakdowns by model, provider, key, app and agent, key and app columns and filters, at 1280 and 390 pixels", async () => {
    const client = gatewayClient(stack.gatewayUrl, inferenceKey);
    // An app that names itself, and a request from this dashboard session (charged to "Dashboard").
    const notebook = await client.post("/v1/chat/completions", { model: MODEL, max_tokens: 8, messages: [{ role: "user", content: "hi" }] }, { "X-Title": "Notebook" });
    expect(notebook.status).toBe(200);
    const fromSession = await page.evaluate(`(async () => {
      const csrf = /rt_csrf=([^;]+)/.exec(document.cookie)?.[1] ?? "";
      const res = await fetch("/v1/chat/completions", { method: "POST", headers: { "content-type": "application/json", "x-csrf-token": decodeURIComponent(csrf) }, body: JSON.stringify({ model: ${JSON.stringify(MODEL)}, max_tokens: 8, messages: [{ role: "user", content: "from the dashboard" }] }) });
      return res.status;
    })()`);
    expect(fromSession).toBe(200);
    await page.goto("/workspace#activity");
    await reloadUntil(page, page.getByTestId("total-requests"), async () => (await page.getByTestId("total-requests").textContent()) === "3", "three requests in the totals");

    // Money: a non-zero spend never reads $0.00; the exact amount is on hover.
    const spend = (await page.getByTestId("total-spend").textContent()) ?? "";
    expect(spend).toMatch(/^\$0\.\d*[1-9]/);
    // The charts: uPlot's canvas with axes, and the hovered day's values in its legend.
    const chart = page.locator(".time-chart").first();
    await chart.locator("canvas").waitFor();
    const box = await chart.locator(".u-over").boundingBox();
    expect(box).not.toBeNull();
    // Hovering the first day of the period shows that day and its (empty) spend in the legend...
    const firstDay = new Intl.DateTimeFormat("en-US", { month: "short", day: "numeric", timeZone: "UTC" }).format(new Date(Date.now() - 29 * 86_400_000));
    await page.mouse.move((box?.x ?? 0) + 3, (box?.y ?? 0) + (box?.height ?? 0) / 2);
    await waitFor(async () => ((await chart.locator(".u-legend .u-series").first().textContent()) ?? "").includes(firstDay), { timeoutMs: 5_000, intervalMs: 100, what: `the hovered day ${firstDay} in the legend` });
    await expect(chart.locator(".u-legend .u-series").nth(1).textContent()).resolves.toContain("$0.00");
    // ...and today's spend once the pointer is on today.
    await page.mouse.move((box?.x ?? 0) + (box?.width ?? 0) - 4, (box?.y ?? 0) + (box?.height ?? 0) / 2);
    await waitFor(async () => /\$0\.\d*[1-9]/.test((await chart.locator(".u-legend .u-series").nth(1).textContent()) ?? ""), {
      timeoutMs: 5_000,
      intervalMs: 100,
      what: "today's spend in the chart's legend on hover",
    });
    expect(await chart.locator(".u-axis").count()).toBeGreaterThanOrEqual(2);

    // Breakdowns.
    await page.getByTestId("breakdown-model").getByRole("rowheader", { name: MODEL }).waitFor();
    const breakdownBy = async (name: string, expected: Array<string | RegExp>) => {
      await page.getByRole("group", { name: "Break down by" }).getByRole("button", { name, exact: true }).click();
      const table = page.getByTestId(`breakdown-${name.toLowerCase()}`);
      for (const row of expected) await table.getByRole("rowheader", { name: row, exact: true }).waitFor();
    };
    // The session's request is charged to the person behind it, named Dashboard (and the key it was opened with).
    await breakdownBy("Key", ["dash-app", /^Dashboard/]);
    // The breakdown's chart: each key's spend by day, stacked, with each one's own value on hover.
    const stackedChart = page.getByRole("figure", { name: /Spend by day and key/ }).locator(".time-chart");
    await stackedChart.locator("canvas").waitFor();
    const over = await stackedChart.locator(".u-over").boundingBox();
    await page.mouse.move((over?.x ?? 0) + (over?.width ?? 0) - 4, (over?.y ?? 0) + (over?.height ?? 0) / 2);
    const dashAppLegend = stackedChart.locator(".u-legend .u-series").filter({ hasText: "dash-app" });
    await waitFor(async () => /\$0\.\d*[1-9]/.test((await dashAppLegend.textContent()) ?? ""), { timeoutMs: 5_000, intervalMs: 100, what: "dash-app's spend today in the stacked chart's legend" });
    await breakdownBy("App", ["Notebook", "no app named"]);
    await breakdownBy("Provider", ["openai"]);
    await breakdownBy("Agent", ["no agent named"]);
    await breakdownBy("Model", [MODEL]);

    // The table's key and app columns, and the key filter.
    const rows = page.getByTestId("requests").locator("tbody tr");
    await expect(rows.count()).resolves.toBe(3);
    await page.getByTestId("requests").getByRole("cell", { name: "Notebook" }).waitFor();
    await page.getByTestId("requests").getByRole("cell", { name: /^Dashboard/ }).waitFor();
    // Each row: the provider's charge at list price and Router's fee, apart; a non-zero charge never reads $0.00.
    await page.getByTestId("requests").getByRole("columnheader", { name: "Provider (list)" }).waitFor();
    await page.getByTestId("requests").getByRole("columnheader", { name: "Router fee" }).waitFor();
    await expect(rows.first().locator("td").nth(6).textContent()).resolves.toMatch(/^\$0\.\d*[1-9]/);
    await page.getByLabel("Key", { exact: true }).selectOption({ label: "dash-app" });
    await page.getByRole("button", { name: "Filter" }).click();
    await waitFor(async () => (await rows.count()) === 2, { timeoutMs: 5_000, intervalMs: 100, what: "dash-app's two requests" });
    // A breakdown line's name shows its requests in the list: the app Notebook's one.
    await page.getByRole("group", { name: "Break down by" }).getByRole("button", { name: "App", exact: true }).click();
    await page.getByTestId("breakdown-app").getByRole("button", { name: "Notebook" }).click();
    await waitFor(async () => (await rows.count()) === 1, { timeoutMs: 5_000, intervalMs: 100, what: "Notebook's one request" });
    await expect(page.getByLabel("App id").inputValue()).resolves.toMatch(/^app_/);
    await expect(page.getByLabel("Key", { exact: true }).inputValue()).resolves.toBe("");
    await expectAccessible(page, "activity-analytics");

    // The request page: the provider's charge at list price, never $0.00 when it is not zero.
    await page.getByRole("link", { name: new RegExp(`open request ${notebook.json.id as string}$`) }).click();
    await expect(page.getByTestId("request-list-price").textContent()).resolves.toMatch(/^\$0\.\d*[1-9]/);

    await page.setViewportSize(PHONE);
    try {
      await expectNoSidewaysScroll(page);
      await expectAccessible(page, "request-detail-phone");
      await page.getByRole("link", { name: "← Activity" }).click();
      await page.getByTestId("breakdown-model").waitFor();
      await chart.locator("canvas").waitFor();
      await expectNoSidewaysScroll(page);
      await expectAccessible(page, "activity-analytics-phone");
      // The navigation fits: one Menu button, the sections in two columns when open.
      await page.getByRole("button", { name: /^Menu/ }).click();
      await page.getByRole("link", { name: "Organisation" }).waitFor();
      await expectNoSidewaysScroll(page);
      await expectAccessible(page, "navigation-phone");
      await page.getByRole("link", { name: "Routing" }).click();
      await page.getByRole("heading", { name: "Account defaults" }).waitFor();
      await expect(page.getByRole("link", { name: "Organisation" }).isVisible()).resolves.toBe(false);
      for (const part of ["defaults", "presets", "guardrails", "privacy", "preview"]) {
        await page.goto(`/workspace#routing/${part}`);
        await page.getByRole("navigation", { name: "Routing" }).waitFor();
        await expectNoSidewaysScroll(page);
        await expectAccessible(page, `routing-${part}-phone`);
      }
    } finally {
      await page.setViewportSize(DESKTOP);
    }
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
    // The person signs in with a wallet in a cookie jar; the session moves into the browser.
    const person = await walletPerson();
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

    // On a phone the sections are behind the Menu button.
    await p.getByRole("button", { name: /^Menu/ }).click();
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

    // Finance sees who is in the organisation, with no control an owner has.
    await p.getByRole("button", { name: /^Menu/ }).click();
    await p.getByRole("link", { name: "Members" }).click();
    await p.getByText("Only an owner changes roles, removes people and invites.").waitFor();
    await p.getByTestId("members").waitFor();
    await expect(p.getByRole("button", { name: /^Change role/ }).count()).resolves.toBe(0);
    await expect(p.getByRole("button", { name: "Create invitation link" }).count()).resolves.toBe(0);
    // Finance reads the configuration sections and is offered none of their writes.
    await p.goto("/workspace#routing");
    await p.getByText("Only an owner or an admin changes the account defaults.").waitFor();
    for (const [part, heading, write] of [
      ["defaults", "Account defaults", "Save defaults"],
      ["presets", "Presets", "Create preset"],
      ["guardrails", "Guardrails", "Create guardrail"],
      ["privacy", "Privacy policy", "Save policy"],
    ]) {
      await p.goto(`/workspace#routing/${part}`);
      await p.getByRole("heading", { name: heading, exact: true }).waitFor();
      await expect(p.getByRole("button", { name: write }).count()).resolves.toBe(0);
    }
    // Finance previews routes as themselves (any role may).
    await p.goto("/workspace#routing/preview");
    await p.getByRole("heading", { name: "Route preview" }).waitFor();
    await p.goto("/workspace#alerts");
    await p.getByRole("heading", { name: "Runaway spend" }).waitFor();
    for (const name of ["Add channel", "Save runaway action"]) await expect(p.getByRole("button", { name }).count()).resolves.toBe(0);
    await p.goto("/workspace#agents");
    await p.getByRole("heading", { name: "Agents and their budgets" }).waitFor();
    await expect(p.getByRole("button", { name: "Save agent budget" }).count()).resolves.toBe(0);
    await p.goto("/workspace#organisation");
    await expect(p.getByTestId("organisation-name").textContent()).resolves.toBe("Dashboard Co");
    await p.getByText("only an owner or an admin renames the organisation", { exact: false }).waitFor();
    await expect(p.getByRole("button", { name: "Rename organisation" }).count()).resolves.toBe(0);
    await finance.close();
  });

  it("lists agents with their month, keeps a refused agent budget's values with the API's message, and saves one", async () => {
    const key = await gatewayClient(stack.gatewayUrl, org.managementKey).post("/v1/keys", { name: "agents" });
    const agentKey = gatewayClient(stack.gatewayUrl, key.json.data.key as string);
    const asked = await agentKey.post("/v1/chat/completions", { model: MODEL, max_tokens: 8, messages: [{ role: "user", content: "plan" }] }, { "x-router-agent": "planner" });
    expect(asked.status).toBe(200);

    await page.goto("/workspace#agents");
    const planner = page.getByTestId("agents").getByRole("listitem").filter({ has: page.getByRole("heading", { name: "planner" }) });
    await reloadUntil(page, page.getByTestId("agents"), async () => /over 1 requests/.test((await planner.textContent()) ?? ""), "the planner's request in the agents list");

    await page.getByLabel("Agent", { exact: true }).fill("planner");
    await page.getByLabel("Agent limit (USD)").fill("half a dollar");
    await page.getByRole("button", { name: "Save agent budget" }).click();
    await expect(page.getByRole("alert").textContent()).resolves.toContain("limit_usd");
    await expect(page.getByLabel("Agent limit (USD)").inputValue()).resolves.toBe("half a dollar");
    await expect(page.getByLabel("Agent", { exact: true }).inputValue()).resolves.toBe("planner");

    await page.getByLabel("Agent limit (USD)").fill("0.5");
    await page.getByLabel("At the limit").selectOption("soft");
    await page.getByRole("button", { name: "Save agent budget" }).click();
    await planner.getByText("monthly: $0.50 soft, organisation-wide, provider keys counted").waitFor();
    await expectAccessible(page, "agents");
    const rows = (await gatewayClient(stack.gatewayUrl, org.managementKey).get("/v1/agents")).json.data as Array<Record<string, any>>;
    expect(rows.find((a) => a.agent === "planner")?.budgets).toEqual([expect.objectContaining({ interval: "monthly", limit_usd: 0.5, mode: "soft" })]);
  });

  it("shows spend against workspace budgets, agent budgets and key ceilings, at 1280 and 390 pixels", async () => {
    await page.goto("/workspace#budgets");
    const workspaces = page.getByTestId("workspace-budgets");
    await workspaces.getByText("monthly").waitFor();
    // The $25 monthly budget set above, with this month's spend against it.
    await expect(workspaces.locator("meter").count()).resolves.toBeGreaterThanOrEqual(1);
    await expect(workspaces.textContent()).resolves.toMatch(/of \$25\.00 \(\d+(\.\d)?%\)/);
    const planner = page.getByTestId("meter-agent-planner-monthly");
    await expect(planner.textContent()).resolves.toMatch(/planner.*of \$0\.50/);
    // dash-app's $0 lifetime ceiling.
    await page.getByTestId("key-ceilings").getByText("dash-app").waitFor();
    await expectAccessible(page, "budgets");
    await page.setViewportSize(PHONE);
    try {
      await expectNoSidewaysScroll(page);
      await expectAccessible(page, "budgets-phone");
    } finally {
      await page.setViewportSize(DESKTOP);
    }
  });

  it("shows runs and a run's tree, resumes a paused run, and shows the API's refusal of a stale close", async () => {
    const mgmt = gatewayClient(stack.gatewayUrl, org.managementKey);
    const agent = gatewayClient(stack.gatewayUrl, (await mgmt.post("/v1/keys", { name: "runner" })).json.data.key as string);
    const open = async (body: Record<string, unknown>) => (await agent.post("/v1/runs", body)).json.data as { id: string };
    // A turn that reports a million prompt tokens costs $0.15: past the $0.10 a minute, the run pauses.
    const paused = await open({ goal: "Triage the inbox", budget_usd: 5, max_cost_per_minute_usd: 0.1 });
    const quiet = await open({ goal: "Write the summary", budget_usd: 1 });
    openai.script({ usage: { prompt: 1_000_000, completion: 0 } });
    const turn = await agent.post("/v1/chat/completions", { model: MODEL, max_tokens: 8, run_id: paused.id, messages: [{ role: "user", content: "step" }] });
    expect(turn.status).toBe(200);
    await waitFor(async () => (await mgmt.get(`/v1/runs/${paused.id}`)).json.data.status === "paused", { timeoutMs: 15_000, intervalMs: 200, what: "the run to pause" });

    await page.goto("/workspace#runs");
    const runs = page.getByTestId("runs");
    await runs.getByText("Triage the inbox").waitFor();
    await expect(runs.getByText("Write the summary").count()).resolves.toBe(1);
    await page.getByRole("button", { name: `open run ${paused.id}` }).click();
    const detail = page.getByRole("region", { name: `Run ${paused.id}` });
    await expect(detail.getByTestId("run-status").textContent()).resolves.toMatch(/^paused \(cost velocity/);
    await expect(detail.getByTestId("run-turns").locator("tbody tr").count()).resolves.toBe(1);
    await expect(detail.getByTestId("run-turns").locator("tbody tr").first().textContent()).resolves.toContain("$0.15");
    await expectAccessible(page, "runs");
    await detail.getByRole("button", { name: "Resume run" }).click();
    await waitFor(async () => (await detail.getByTestId("run-status").textContent()) === "open", { timeoutMs: 5_000, intervalMs: 100, what: "the run to show open" });
    expect((await mgmt.get(`/v1/runs/${paused.id}`)).json.data.status).toBe("open");

    // The page still shows the quiet run open when someone else closes it: the close is refused with the API's words.
    await page.getByRole("button", { name: `open run ${quiet.id}` }).click();
    const other = page.getByRole("region", { name: `Run ${quiet.id}` });
    await other.getByRole("button", { name: "Close as completed" }).waitFor();
    expect((await mgmt.post(`/v1/runs/${quiet.id}/close`, { status: "cancelled" })).status).toBe(200);
    await other.getByRole("button", { name: "Close as completed" }).click();
    await expect(other.getByRole("alert").textContent()).resolves.toBe("This run is cancelled; it is already closed.");
  });

  it("invites with a link shown once, changes a member's role, and shows the API's refusal to demote the last owner", async () => {
    await page.goto("/workspace#members");
    await page.getByLabel("Invite someone as").selectOption("member");
    await page.getByRole("button", { name: "Create invitation link" }).click();
    const link = (await page.getByTestId("invitation-link").textContent()) ?? "";
    expect(link).toMatch(/\/invite#token=/);
    await expectAccessible(page, "members-invited");
    // A second invitation (Finance), revoked from the list.
    await page.getByLabel("Invite someone as").selectOption("billing");
    await page.getByRole("button", { name: "Create invitation link" }).click();
    const invitations = page.getByTestId("invitations").getByRole("listitem");
    await waitFor(async () => (await invitations.count()) === 2, { timeoutMs: 5_000, intervalMs: 100, what: "two open invitations" });
    await page.getByRole("button", { name: /^Revoke the Finance invitation/ }).click();
    await waitFor(async () => (await invitations.count()) === 1, { timeoutMs: 5_000, intervalMs: 100, what: "the revoked invitation to leave the list" });
    await expect(invitations.first().textContent()).resolves.toMatch(/^Developer/);

    // The invited person accepts the first link (through the API, in their own cookie jar).
    const person = await walletPerson();
    const token = new URL(link).hash.replace(/^#token=/, "");
    expect((await person.post("/v1/invitations/accept", { token })).status).toBe(200);
    const members = (await gatewayClient(stack.gatewayUrl, org.managementKey).get("/v1/organization/members")).json.data as Array<Record<string, any>>;
    const joined = members.find((m) => m.role === "member");
    expect(joined).toBeDefined();
    const id = joined?.user_id as string;
    const who = (joined?.name ?? joined?.email ?? id) as string;

    await page.reload();
    await expect(page.getByTestId(`role-of-${id}`).textContent()).resolves.toBe("Developer");
    await page.getByLabel(`New role for ${who}`).selectOption("owner");
    await page.getByRole("button", { name: `Change role for ${who}` }).click();
    await waitFor(async () => (await page.getByTestId(`role-of-${id}`).textContent()) === "Owner", { timeoutMs: 5_000, intervalMs: 100, what: "the new role" });
    // The only person who is an owner cannot be demoted: the API says why, and the choice stays.
    await page.getByLabel(`New role for ${who}`).selectOption("billing");
    await page.getByRole("button", { name: `Change role for ${who}` }).click();
    const card = page.getByTestId("members").getByRole("listitem").filter({ has: page.getByTestId(`role-of-${id}`) });
    await expect(card.getByRole("alert").textContent()).resolves.toContain("last owner");
    await expect(page.getByLabel(`New role for ${who}`).inputValue()).resolves.toBe("billing");
    await expectAccessible(page, "members");
  });

  it("saves the routing defaults, keeps a refused default model with the API's message, and versions and reverts a preset", async () => {
    await page.goto("/workspace#routing");
    await page.getByLabel("Default model (empty for none)").fill("nobody/no-such-model");
    await page.getByRole("button", { name: "Save defaults" }).click();
    await expect(page.getByRole("alert").textContent()).resolves.toContain("default_model");
    await expect(page.getByLabel("Default model (empty for none)").inputValue()).resolves.toBe("nobody/no-such-model");
    await page.getByLabel("Default model (empty for none)").fill(MODEL);
    await page.getByLabel("Order endpoints by").selectOption("price");
    await page.getByRole("button", { name: "Save defaults" }).click();
    await page.getByText(/^Last changed (?!never)/).waitFor();
    const defaults = (await gatewayClient(stack.gatewayUrl, org.managementKey).get("/v1/routing/defaults")).json.data;
    expect(defaults).toMatchObject({ default_model: MODEL, default_sort: "price", lock_sort: false });
    await expectAccessible(page, "routing-defaults");

    // Each part of routing is its own address.
    await page.getByRole("navigation", { name: "Routing" }).getByRole("link", { name: "Presets" }).click();
    await page.waitForURL(/#routing\/presets$/);
    await page.getByLabel("Slug").fill("terse");
    await page.getByLabel("Preset name").fill("Terse");
    await page.getByRole("button", { name: "Create preset" }).click();
    const card = page.getByTestId("presets").getByRole("listitem").filter({ hasText: "@preset/terse" }).first();
    await card.waitFor();
    // The same slug again: refused with the API's words, the form as typed.
    await page.getByLabel("Slug").fill("terse");
    await page.getByLabel("Preset name").fill("Terse again");
    await page.getByRole("button", { name: "Create preset" }).click();
    await expect(page.getByRole("alert").textContent()).resolves.toMatch(/terse|already/);
    await expect(page.getByLabel("Preset name").inputValue()).resolves.toBe("Terse again");

    await page.getByRole("button", { name: "Versions of terse" }).click();
    await page.getByLabel("New version of terse (JSON)").fill(JSON.stringify({ model: MODEL, temperature: 0.7 }));
    await page.getByLabel("Note (optional)").fill("warmer");
    await page.getByRole("button", { name: "Save version" }).click();
    const versions = page.getByTestId("versions-terse").getByRole("listitem");
    await waitFor(async () => (await versions.count()) === 2, { timeoutMs: 5_000, intervalMs: 100, what: "the second version" });
    await expect(versions.first().textContent()).resolves.toMatch(/^Version 2 \(current\).*warmer/);
    await page.getByRole("button", { name: "Revert terse to version 1" }).click();
    await waitFor(async () => (await versions.count()) === 3, { timeoutMs: 5_000, intervalMs: 100, what: "the revert as version 3" });
    await expect(versions.first().textContent()).resolves.toMatch(/^Version 3 \(current\).*revert to version 1/);
    await expectAccessible(page, "routing-presets");
  });

  it("creates a guardrail with a content filter and applies it to a key, previews a privacy policy, and previews routes as the signed-in person", async () => {
    expect((await gatewayClient(stack.gatewayUrl, org.managementKey).post("/v1/keys", { name: "playground" })).status).toBe(201);
    await page.goto("/workspace#routing/guardrails");
    await page.reload();
    await page.getByLabel("Guardrail name").fill("No secrets");
    await page.getByLabel("email").check();
    await page.getByLabel("Pattern (RE2, no lookaround or backreferences)").fill("secret-(?=\\d)");
    await page.getByRole("button", { name: "Create guardrail" }).click();
    await expect(page.getByRole("alert").textContent()).resolves.toContain("content_filters.0.pattern");
    await expect(page.getByLabel("Guardrail name").inputValue()).resolves.toBe("No secrets");
    await page.getByLabel("Pattern (RE2, no lookaround or backreferences)").fill("secret-\\d+");
    await page.getByLabel("Filter label (optional)").fill("secrets");
    await page.getByRole("button", { name: "Create guardrail" }).click();
    const guardrail = page.getByTestId("guardrails").getByRole("listitem").filter({ has: page.getByRole("heading", { name: "No secrets" }) });
    await guardrail.getByText("email, secrets (block)").waitFor();
    await page.getByLabel("Apply No secrets to key").selectOption({ label: "playground" });
    await guardrail.getByRole("button", { name: "Apply to key" }).click();
    await guardrail.getByText("key playground").waitFor();
    // A member is picked from the organisation's members; the routing API then lists the assignment.
    const mgmt = gatewayClient(stack.gatewayUrl, org.managementKey);
    const member = ((await mgmt.get("/v1/organization/members")).json.data as Array<Record<string, any>>).find((m) => m.role === "billing");
    expect(member).toBeDefined();
    await page.getByLabel("Apply No secrets to member").selectOption(member?.user_id as string);
    await guardrail.getByRole("button", { name: "Apply to member" }).click();
    await guardrail.getByText(/member .*\(Finance\)/).waitFor();
    const listed = ((await mgmt.get("/v1/guardrails")).json.data as Array<Record<string, any>>).find((g) => g.name === "No secrets");
    expect(listed?.assignments).toEqual(
      expect.arrayContaining([
        { subject_type: "key", subject_id: expect.any(String) },
        { subject_type: "member", subject_id: member?.user_id },
      ]),
    );
    expect(listed?.assignments).toHaveLength(2);
    await expectAccessible(page, "routing-guardrails");

    await page.goto("/workspace#routing/privacy");
    const saved = (await page.getByTestId("privacy-saved").textContent()) ?? "";
    await page.getByLabel("Only endpoints that do not train on requests").check();
    await page.getByRole("button", { name: "Preview policy" }).click();
    await expect(page.getByTestId("privacy-preview").textContent()).resolves.toMatch(/^\d+ models available, \d+ without/);
    expect((await gatewayClient(stack.gatewayUrl, org.managementKey).get("/v1/privacy")).json.data.policy.deny_training).toBe(false);
    await expect(page.getByTestId("privacy-saved").textContent()).resolves.toBe(saved);
    await expectAccessible(page, "routing-privacy");
    await page.goto("/workspace#routing/preview");

    /** The preview's answer replaces the last one: waits for the refusal that names `code`. */
    const refusalSays = (code: string) =>
      waitFor(async () => ((await page.getByTestId("preview-refusal").textContent({ timeout: 1_000 }).catch(() => "")) ?? "").includes(code), {
        timeoutMs: 5_000,
        intervalMs: 100,
        what: `the preview to refuse with ${code}`,
      });
    // No key to paste: the preview runs as this session.
    await expect(page.getByLabel("Inference key").count()).resolves.toBe(0);
    await page.getByLabel("Model", { exact: true }).fill(MODEL);
    await page.getByLabel("Message (optional, for content filters)").fill("hello");
    await page.getByLabel("Routing seed (optional)").fill("alpha");
    await page.getByRole("button", { name: "Preview route" }).click();
    await expect(page.getByTestId("preview-winner").textContent()).resolves.toContain("openai");
    expect(await page.getByTestId("preview-cascade").locator("tbody tr").count()).toBeGreaterThan(0);
    await expectAccessible(page, "routing-preview");
    // A model the catalog does not have: routing's refusal, in the API's words.
    await page.getByLabel("Model", { exact: true }).fill("nobody/no-such-model");
    await page.getByRole("button", { name: "Preview route" }).click();
    await refusalSays("model_not_found");
  });

  it("adds an alert channel whose secret is shown once, sends it a test, lists the delivery, and sets the runaway action", async () => {
    await page.goto("/workspace#alerts");
    await page.getByLabel("Channel name").fill("ops");
    await page.getByLabel("URL (public https)").fill("http://hooks.example.com/router");
    await page.getByRole("button", { name: "Add channel" }).click();
    await expect(page.getByRole("alert").textContent()).resolves.toContain("target");
    await expect(page.getByLabel("URL (public https)").inputValue()).resolves.toBe("http://hooks.example.com/router");
    await page.getByLabel("URL (public https)").fill(`${receiver.url}/alerts`);
    await page.getByRole("button", { name: "Add channel" }).click();
    const secret = (await page.getByTestId("channel-secret").textContent()) ?? "";
    expect(secret.length).toBeGreaterThan(16);

    await page.getByRole("button", { name: "Send test to ops" }).click();
    await page.getByText("Test sent (HTTP 200)").waitFor();
    expect(receiver.requests.filter((r) => r.path === "/alerts")).toHaveLength(1);
    expect(receiver.requests[0]?.headers["x-router-signature"]).toBeDefined();
    await page.getByTestId("deliveries").getByText("ops").waitFor();

    await page.getByTestId("no-flags").waitFor();
    await page.getByLabel("When a key runs away").selectOption("pause");
    await page.getByRole("button", { name: "Save runaway action" }).click();
    await waitFor(async () => (await gatewayClient(stack.gatewayUrl, org.managementKey).get("/v1/alerts/settings")).json.data.runaway_action === "pause", {
      timeoutMs: 5_000,
      intervalMs: 100,
      what: "the runaway action to be pause",
    });
    await expectAccessible(page, "alerts");
    // The page after a reload no longer holds the secret.
    await page.reload();
    await page.getByRole("heading", { name: "ops" }).waitFor();
    expect(await page.content()).not.toContain(secret);
  });

  it("adds a broadcast destination whose secret is shown once, sends it a test, and pauses it", async () => {
    await page.goto("/workspace#broadcast");
    await page.getByLabel("Destination name (optional)").fill("warehouse");
    await page.getByLabel("Destination URL (public https)").fill(`${receiver.url}/traces`);
    await page.getByLabel("Share of requests sent (0 to 1)").fill("2");
    await page.getByRole("button", { name: "Add destination" }).click();
    await expect(page.getByRole("alert").textContent()).resolves.toContain("sample_rate");
    await expect(page.getByLabel("Destination URL (public https)").inputValue()).resolves.toBe(`${receiver.url}/traces`);
    await page.getByLabel("Share of requests sent (0 to 1)").fill("0.5");
    await page.getByRole("button", { name: "Add destination" }).click();
    expect(((await page.getByTestId("destination-secret").textContent()) ?? "").length).toBeGreaterThan(16);
    const card = page.getByTestId("destinations").getByRole("listitem").filter({ has: page.getByRole("heading", { name: "warehouse" }) });
    await card.getByText("50% of requests").waitFor();

    await page.getByRole("button", { name: "Send test to warehouse" }).click();
    await card.getByText("Test delivered (HTTP 200)").waitFor();
    expect(receiver.requests.filter((r) => r.path === "/traces")).toHaveLength(1);
    await page.getByRole("button", { name: "Pause warehouse" }).click();
    await card.getByText(/; paused$/).waitFor();
    await expectAccessible(page, "broadcast");
  });

  it("brands client reports, keeps a refused logo's form with the API's message, and shows a client's month", async () => {
    const mgmt = gatewayClient(stack.gatewayUrl, org.managementKey);
    const acme = (await mgmt.post("/v1/workspaces", { name: "Acme" })).json.data as { id: string };
    const key = (await mgmt.post("/v1/keys", { name: "acme app", workspace_id: acme.id })).json.data.key as string;
    const asked = await gatewayClient(stack.gatewayUrl, key).post("/v1/chat/completions", { model: MODEL, max_tokens: 8, messages: [{ role: "user", content: "hi" }] }, { "x-router-agent": "drafter" });
    expect(asked.status).toBe(200);
    await waitFor(async () => (await mgmt.get(`/v1/reports/workspaces/${acme.id}`)).json.data?.totals?.requests === 1, { timeoutMs: 20_000, intervalMs: 250, what: "the request in Acme's month" });

    await page.goto("/workspace#reports");
    await page.getByLabel("Brand name").fill("Agency");
    await page.getByLabel("Footer").fill("Questions? ops@agency.test");
    await page.getByLabel("Logo (PNG or JPEG, under 150 KB)").setInputFiles({ name: "logo.png", mimeType: "image/png", buffer: Buffer.from("not a picture") });
    await page.getByText("A new logo is chosen; save to use it.").waitFor();
    await page.getByRole("button", { name: "Save branding" }).click();
    await expect(page.getByRole("alert").textContent()).resolves.toContain("brand_logo");
    await expect(page.getByLabel("Brand name").inputValue()).resolves.toBe("Agency");
    await page.getByRole("button", { name: "Remove logo" }).click();
    await page.getByRole("button", { name: "Save branding" }).click();
    await waitFor(async () => (await mgmt.get("/v1/reports/branding")).json.data.brand_name === "Agency", { timeoutMs: 5_000, intervalMs: 100, what: "the saved brand name" });

    await page.getByLabel("Client (workspace)").selectOption({ label: "Acme" });
    await page.getByRole("button", { name: "Show report" }).click();
    const report = page.getByTestId("client-report");
    await expect(report.getByRole("heading").first().textContent()).resolves.toMatch(/^Agency: Acme, \d{4}-\d{2}/);
    await expect(report.getByTestId("report-requests").textContent()).resolves.toBe("1");
    await report.getByRole("cell", { name: "drafter" }).waitFor();
    await report.getByText("Questions? ops@agency.test").waitFor();
    await expectAccessible(page, "reports");
  });

  it("prints a client's month as a report on its own, with the brand's logo: no navigation, header or forms, one page", async () => {
    // A real PNG (one pixel) this time: the report draws it from its data URI, which the policy allows.
    const png = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==", "base64");
    await page.getByLabel("Logo (PNG or JPEG, under 150 KB)").setInputFiles({ name: "logo.png", mimeType: "image/png", buffer: png });
    await page.getByText("A new logo is chosen; save to use it.").waitFor();
    await page.getByRole("button", { name: "Save branding" }).click();
    await page.getByText("A logo is saved.").waitFor();
    await page.reload();
    await page.getByLabel("Client (workspace)").selectOption({ label: "Acme" });
    await page.getByRole("button", { name: "Show report" }).click();
    const report = page.getByTestId("client-report");
    await report.getByRole("img", { name: "Agency logo" }).waitFor();
    await waitFor(async () => (await page.evaluate('document.querySelector(".report-logo").naturalWidth')) === 1, { timeoutMs: 5_000, intervalMs: 100, what: "the logo to load" });
    // The button hands over to the browser's print (stood in for here: a headless browser has no dialog).
    await page.evaluate("window.print = () => { window.printed = true; }");
    await report.getByRole("button", { name: "Print report" }).click();
    expect(await page.evaluate("window.printed === true")).toBe(true);

    const display = (selector: string) => page.evaluate(`getComputedStyle(document.querySelector(${JSON.stringify(selector)})).display`);
    await expect(display("nav")).resolves.not.toBe("none");
    await page.emulateMedia({ media: "print" });
    try {
      for (const hidden of ["nav", "header.top", "form", "#reports-heading", "#client-month-heading"]) await expect(display(hidden)).resolves.toBe("none");
      await expect(report.isVisible()).resolves.toBe(true);
      await expect(report.getByRole("button", { name: "Print report" }).isVisible()).resolves.toBe(false);
      await expect(report.getByRole("cell", { name: "drafter" }).isVisible()).resolves.toBe(true);
      await expect(report.getByText("Questions? ops@agency.test").isVisible()).resolves.toBe(true);
      await expect(report.getByRole("img", { name: "Agency logo" }).isVisible()).resolves.toBe(true);
      await screenshot(page, "report-print");
      // The browser's own print of the page: one A4 page.
      const pdf = (await page.pdf({ format: "A4" })).toString("latin1");
      expect(pdf.match(/\/Type\s*\/Page\b/g)).toHaveLength(1);
    } finally {
      await page.emulateMedia({ media: null });
    }
    await expect(display("nav")).resolves.not.toBe("none");
  });

  it("renames the organisation from its page, and keeps a refused name with the API's message", async () => {
    const mgmt = gatewayClient(stack.gatewayUrl, org.managementKey);
    const before = (await mgmt.get("/v1/organization")).json.data as Record<string, any>;
    await page.goto("/workspace#organisation");
    const facts = page.getByTestId("organisation");
    await expect(facts.getByTestId("organisation-name").textContent()).resolves.toBe("Dashboard Co");
    await expect(facts.getByTestId("organisation-members").textContent()).resolves.toBe(String(before.members));
    for (const fact of [before.id, before.slug, before.plan]) await facts.getByText(fact as string, { exact: true }).waitFor();

    // Only spaces: the API's refusal word for word, the field as typed, nothing renamed.
    const refused = await mgmt.patch("/v1/organization", { name: "   " });
    expect(refused.status).toBe(400);
    await page.getByLabel("Organisation name").fill("   ");
    await page.getByRole("button", { name: "Rename organisation" }).click();
    await expect(page.getByRole("alert").textContent()).resolves.toBe(refused.json.error.message);
    await expect(page.getByLabel("Organisation name").inputValue()).resolves.toBe("   ");
    expect((await mgmt.get("/v1/organization")).json.data.name).toBe("Dashboard Co");

    await page.getByLabel("Organisation name").fill("  Dashboard Holdings ");
    await page.getByRole("button", { name: "Rename organisation" }).click();
    await waitFor(async () => (await facts.getByTestId("organisation-name").textContent()) === "Dashboard Holdings", { timeoutMs: 5_000, intervalMs: 100, what: "the new name" });
    expect((await mgmt.get("/v1/organization")).json.data).toMatchObject({ id: before.id, slug: before.slug, name: "Dashboard Holdings" });
    await expect(page.getByLabel("Organisation name").inputValue()).resolves.toBe("Dashboard Holdings");
    // The header's name comes from the organisation list, reloaded by the rename.
    await page.locator("header.top .who").getByText("Dashboard Holdings").waitFor();
    await expectAccessible(page, "organisation");
  });

  it("signs out", async () => {
    await page.goto("/workspace");
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL(/\/signin/);
    await page.goto("/workspace");
    await page.waitForURL(/\/signin\?next=/);
  });
});
