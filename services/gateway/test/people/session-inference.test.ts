import { SESSION_TTL_MS } from "../../../console/src/sessions/session-store";
import { Browser } from "@router/testkit";
import { newOrganisation, startHarness, type Harness } from "../harness";

let h: Harness;

beforeAll(async () => {
  h = await startHarness("gw_session_inference");
});

afterAll(async () => {
  await h.close();
});

const CHAT = { model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "hi" }] };

/**
 * Chat completions and the route preview with a dashboard session whose time is up: refused as every
 * route refuses it (401 with the envelope, naming the cookie), before anything is routed or spent.
 */
describe("inference with an expired dashboard session", () => {
  it("refuses chat completions and the route preview with 401 once the session has expired", async () => {
    const org = await newOrganisation(h, "Expiring");
    // The browser's clock stays at the exchange, so it still sends the cookie that the gateway,
    // whose clock moves past the session's end, must refuse.
    const exchangedAt = h.clock.now();
    const browser = new Browser(h.url, { now: () => exchangedAt });
    expect((await browser.post("/v1/auth/exchange", { key: org.managementKey })).status).toBe(200);
    // Live: the session is authenticated (the fake routing has no catalog, so what follows is not a 401).
    const live = await browser.post("/v1/chat/completions", CHAT);
    expect(live.status).not.toBe(401);

    h.clock.advance(SESSION_TTL_MS + 1_000);
    for (const [path, body] of [
      ["/v1/chat/completions", CHAT],
      ["/v1/routing/preview", { model: CHAT.model }],
    ] as const) {
      const res = await browser.post(path, body);
      expect(res.status).toBe(401);
      expect(res.body.error).toMatchObject({ code: "unauthorized", details: { field: "rt_session" } });
      expect(res.body.error.message).toContain("sign in again");
    }
  });
});
