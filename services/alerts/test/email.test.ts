import { SMTPServer } from "smtp-server";
import { orgId, startAlertsHarness, type AlertsHarness } from "./alerts-harness";

interface Received {
  to: string[];
  text: string;
}

/** A real SMTP server on loopback (smtp-server) standing in for the deployment's mail server. */
async function startSmtpReceiver(opts: { refuse?: boolean } = {}): Promise<{ url: string; received: Received[]; close(): Promise<void> }> {
  const received: Received[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    onRcptTo(address, _session, callback) {
      if (opts.refuse) {
        callback(Object.assign(new Error("mailbox unavailable, and here is our internal host name"), { responseCode: 550 }));
        return;
      }
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        received.push({ to: session.envelope.rcptTo.map((r) => r.address), text: Buffer.concat(chunks).toString("utf8") });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const address = server.server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return { url: `smtp://127.0.0.1:${port}`, received, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe("email channels", () => {
  let smtp: Awaited<ReturnType<typeof startSmtpReceiver>>;
  let h: AlertsHarness;

  beforeAll(async () => {
    smtp = await startSmtpReceiver();
    h = await startAlertsHarness("alertsemail", { email: { smtpUrl: smtp.url, from: "alerts@router.example" } });
  });
  afterAll(async () => {
    await h.close();
    await smtp.close();
  });

  it("says email is available and sends a test alert to the address", async () => {
    const org = orgId();
    const created = await h.call("POST", "/v1/alerts/channels", { orgId: org }, { kind: "email", target: "Ops@Example.com", name: "ops mail" });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ kind: "email", target: "ops@example.com" });
    expect(created.body.data).not.toHaveProperty("signing_secret");
    expect((await h.call("GET", "/v1/alerts/channels", { orgId: org })).body.email_available).toBe(true);

    const res = await h.call("POST", `/v1/alerts/channels/${created.body.data.id}/test`, { orgId: org });
    expect(res.body.data).toEqual({ status: "sent", http_status: null, error: null });
    expect(smtp.received).toHaveLength(1);
    expect(smtp.received[0]?.to).toEqual(["ops@example.com"]);
    // The subject is MIME-encoded; the text part carries the summary as is.
    expect(smtp.received[0]?.text).toMatch(/^Subject: .*Router_alert/m);
    expect(smtp.received[0]?.text).toContain('test alert for channel "ops mail".');
    expect(smtp.received[0]?.text).toContain("From: alerts@router.example");
  });

  it("refuses a target that is not an email address", async () => {
    const res = await h.call("POST", "/v1/alerts/channels", { orgId: orgId() }, { kind: "email", target: "https://hooks.example.com/x" });
    expect(res.status).toBe(400);
    expect(res.body.error.details.field).toBe("target");
  });

  it("records a refused message in its own words, without the server's text", async () => {
    const refusing = await startSmtpReceiver({ refuse: true });
    const other = await startAlertsHarness("alertsemailrefused", { email: { smtpUrl: refusing.url, from: "alerts@router.example" } });
    try {
      const org = orgId();
      const created = await other.call("POST", "/v1/alerts/channels", { orgId: org }, { kind: "email", target: "ops@example.com" });
      const res = await other.call("POST", `/v1/alerts/channels/${created.body.data.id}/test`, { orgId: org });
      expect(res.body.data).toEqual({ status: "failed", http_status: null, error: "the mail server did not accept the message (SMTP 550)" });
    } finally {
      await other.close();
      await refusing.close();
    }
  });
});
