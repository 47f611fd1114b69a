const { startStack, gatewayClient } = require("@router/testkit");
const { startFake } = require("./bench/dist/bench-processes");
const { runLoad } = require("./bench/dist/load");
(async () => {
  const fake = await startFake();
  const stack = await startStack({ providerBaseUrls: { openai: fake.url }, extraEnv: { LOG_LEVEL: "warn" }, nodeArgs: ["--cpu-prof", "--cpu-prof-dir=/tmp/prof"] });
  try {
    const org = await stack.createOrg("Prof");
    const mgmt = gatewayClient(stack.gatewayUrl, org.managementKey);
    await mgmt.post("/v1/provider-keys", { provider: "openai", api_key: "sk-bench-000000000000" });
    const key = (await mgmt.post("/v1/keys", { name: "plain" })).json.data.key;
    const t = { origin: stack.gatewayUrl, path: "/v1/chat/completions", headers: { "content-type": "application/json", authorization: `Bearer ${key}` }, body: JSON.stringify({ model: "openai/gpt-4o-mini", max_tokens: 16, messages: [{ role: "user", content: "Say hello in one short sentence." }] }), stream: false };
    await runLoad(t, 300, 3);
    const r = await runLoad(t, 300, 10);
    console.log(JSON.stringify({ p50: r.p50, p99: r.p99, ok: r.ok, failed: r.failed }));
  } finally { await stack.stop(); await fake.stop?.(); await fake.close?.(); }
})();
