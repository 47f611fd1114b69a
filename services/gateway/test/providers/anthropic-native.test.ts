import { parseMessages } from "../../../../libs/inference-api/src/anthropic-messages/request";
import { buildAnthropicNativeRequest } from "../../../../libs/providers/src/anthropic/native-request";
import { bodyOf, target } from "./wire-samples";

/** What goes to Anthropic for a Messages body, through the same parse the route uses. */
function sent(body: Record<string, unknown>, overrides: Parameters<typeof target>[0] = {}, stream = false) {
  const { request, native } = parseMessages(body);
  const req = buildAnthropicNativeRequest(native.body, request, target({ providerSlug: "anthropic", baseUrl: "https://api.anthropic.test/v1", ...overrides }), stream);
  return { req, body: bodyOf(req) };
}

const user = (text: string) => ({ role: "user", content: text });

describe("a Messages body sent to Anthropic as the client wrote it", () => {
  it("keeps cache markers, beta fields, unknown block types and server tools byte for byte; only the model changes", () => {
    const body = {
      model: "anthropic/claude-sonnet-4.5",
      max_tokens: 1000,
      system: [{ type: "text", text: "You are Claude Code.", cache_control: { type: "ephemeral", ttl: "1h" } }],
      messages: [
        { role: "user", content: [{ type: "text", text: "Hi", cache_control: { type: "ephemeral" } }, { type: "search_result", source: "s", title: "t", content: [] }] },
        { role: "assistant", content: [{ type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "q" } }] },
        { role: "user", content: "and?" },
      ],
      tools: [
        { name: "Bash", input_schema: { type: "object" }, cache_control: { type: "ephemeral" } },
        { type: "web_search_20250305", name: "web_search", max_uses: 5 },
      ],
      context_management: { edits: [{ type: "clear_tool_uses_20250919" }] },
      metadata: { user_id: "user_1" },
      a_field_from_next_year: { x: 1 },
      provider: { sort: "price" },
      session_id: "sess-1",
    };
    const { req, body: out } = sent(body, { upstreamModel: "claude-sonnet-4-5-20250929", vendorBeta: "context-management-2025-06-27" });
    const { provider: _p, session_id: _s, ...client } = body;
    expect(out).toEqual({ ...client, model: "claude-sonnet-4-5-20250929" });
    expect(req.url.href).toBe("https://api.anthropic.test/v1/messages");
    expect(req.headers).toMatchObject({ "x-api-key": "sk-test-123", "anthropic-version": "2023-06-01", "anthropic-beta": "context-management-2025-06-27" });
  });

  it("sets stream per dispatch, whatever the body said", () => {
    expect(sent({ max_tokens: 10, messages: [user("Hi")], stream: true }).body.stream).toBeUndefined();
    expect(sent({ max_tokens: 10, messages: [user("Hi")] }, {}, true).body.stream).toBe(true);
  });

  it("clamps max_tokens to the endpoint's maximum output, with a thinking budget below it", () => {
    const { body } = sent({ max_tokens: 128000, messages: [user("Hi")], thinking: { type: "enabled", budget_tokens: 31999 } }, { maxOutputTokens: 8192 });
    expect(body.max_tokens).toBe(8192);
    expect(body.thinking).toEqual({ type: "enabled", budget_tokens: 8191 });
    expect(sent({ max_tokens: 500, messages: [user("Hi")] }, { maxOutputTokens: 8192 }).body.max_tokens).toBe(500);
  });

  it("drops thinking when max_tokens leaves no room for the 1024-token floor", () => {
    const { body } = sent({ max_tokens: 4000, messages: [user("Hi")], thinking: { type: "enabled", budget_tokens: 2000 } }, { maxOutputTokens: 1000 });
    expect(body.max_tokens).toBe(1000);
    expect(body.thinking).toBeUndefined();
  });

  it("folds system messages: leading ones into system, later ones to the end of the next user turn, after its tool results", () => {
    const { body } = sent({
      max_tokens: 100,
      system: "Base.",
      messages: [
        { role: "system", content: "Also this." },
        user("Run it"),
        { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "Bash", input: {} }] },
        { role: "system", content: [{ type: "text", text: "<reminder>", cache_control: { type: "ephemeral" } }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "done" }] },
        { role: "system", content: "Last word." },
      ],
    });
    expect(body.system).toEqual([
      { type: "text", text: "Base." },
      { type: "text", text: "Also this." },
    ]);
    expect(body.messages).toEqual([
      user("Run it"),
      { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "Bash", input: {} }] },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "t1", content: "done" },
          { type: "text", text: "<reminder>", cache_control: { type: "ephemeral" } },
          { type: "text", text: "Last word." },
        ],
      },
    ]);
  });

  it("sends adaptive thinking and effort as they are to newer models, and as a budget of that effort to older ones", () => {
    const body = { max_tokens: 10000, messages: [user("Hi")], thinking: { type: "adaptive" }, output_config: { effort: "low", format: { type: "json_schema" } } };
    const newer = sent(body, { upstreamModel: "claude-opus-4-7", maxOutputTokens: 128000 }).body;
    expect(newer.thinking).toEqual({ type: "adaptive" });
    expect(newer.output_config).toEqual({ effort: "low", format: { type: "json_schema" } });
    for (const older of ["claude-sonnet-4-5-20250929", "claude-haiku-4-5", "claude-opus-4-1-20250805", "claude-sonnet-4-20250514", "claude-3-5-haiku-20241022"]) {
      const out = sent(body, { upstreamModel: older, maxOutputTokens: 64000 }).body;
      expect(out.thinking).toEqual({ type: "enabled", budget_tokens: 2000 });
      expect(out.output_config).toEqual({ format: { type: "json_schema" } });
    }
    const noEffort = sent({ max_tokens: 10000, messages: [user("Hi")], thinking: { type: "adaptive" } }, { upstreamModel: "claude-haiku-4-5-20251001", maxOutputTokens: 64000 }).body;
    expect(noEffort.thinking).toEqual({ type: "enabled", budget_tokens: 8000 });
    expect(noEffort.output_config).toBeUndefined();
  });

  it("fills in a preset's sampling settings the body left out, except with thinking on", () => {
    const { request, native } = parseMessages({ max_tokens: 10, messages: [user("Hi")] });
    const withPreset = { ...request, temperature: 1.5, top_k: 40 };
    expect(bodyOf(buildAnthropicNativeRequest(native.body, withPreset, target(), false))).toMatchObject({ temperature: 1, top_k: 40 });
    const thinking = parseMessages({ max_tokens: 5000, messages: [user("Hi")], thinking: { type: "enabled", budget_tokens: 2000 } });
    const out = bodyOf(buildAnthropicNativeRequest(thinking.native.body, { ...thinking.request, temperature: 0.2 }, target(), false));
    expect(out.temperature).toBeUndefined();
  });
});
