import { parseChatRequest } from "@router/chat-request";
import { adapterFor } from "@router/providers";
import { bodyOf, target } from "./wire-samples";

function sent(slug: string, body: Record<string, unknown>) {
  const adapter = adapterFor("openai", slug)!;
  return bodyOf(adapter.buildNativeRequest!(body, parseChatRequest(body), target({ providerSlug: slug }), false));
}

describe("a chat completions body sent to an OpenAI-compatible provider", () => {
  const body = {
    model: "openai/gpt-4o-mini",
    messages: [
      { role: "system", content: [{ type: "text", text: "Be brief.", cache_control: { type: "ephemeral" } }] },
      { role: "user", content: "Hi", some_message_field: true, reasoning_details: [] },
    ],
    max_completion_tokens: 100,
    service_tier: "flex",
    verbosity: "low",
    metadata: { team: "search" },
    logprobs: true,
    provider: { sort: "price" },
    usage: { include: true },
    session_id: "s1",
  };

  it("passes every field Router does not read as the client wrote it, and none of Router's own (cache markers are Router's: Anthropic's)", () => {
    const out = sent("openai", body);
    expect(out).toMatchObject({ model: "model-upstream", service_tier: "flex", verbosity: "low", metadata: { team: "search" }, logprobs: true, max_completion_tokens: 100 });
    for (const own of ["provider", "usage", "session_id"]) expect(out).not.toHaveProperty(own);
    expect(out.messages).toEqual([
      { role: "system", content: [{ type: "text", text: "Be brief." }] },
      { role: "user", content: "Hi", some_message_field: true },
    ]);
  });

  it("leaves them out for a provider that refuses unknown fields (Mistral), as a translated request", () => {
    const out = sent("mistral", body);
    for (const extra of ["service_tier", "verbosity", "metadata", "logprobs"]) expect(out).not.toHaveProperty(extra);
    expect(out.messages[1]).toEqual({ role: "user", content: "Hi" });
  });
});

describe("prompt-cache breakpoints on a chat completions request", () => {
  const ephemeral = { type: "ephemeral" as const };
  const request = parseChatRequest({
    model: "anthropic/claude-sonnet-4.5",
    messages: [
      { role: "system", content: [{ type: "text", text: "Long instructions.", cache_control: { type: "ephemeral", ttl: "1h" } }] },
      { role: "user", content: [{ type: "text", text: "Run it", cache_control: ephemeral }] },
      { role: "assistant", content: null, tool_calls: [{ id: "t1", type: "function", function: { name: "run", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "t1", content: [{ type: "text", text: "done", cache_control: ephemeral }] },
    ],
  });

  it("reach Anthropic on the system prompt, user text and tool results", () => {
    const out = bodyOf(adapterFor("anthropic", "anthropic")!.buildRequest(request, target({ providerSlug: "anthropic" }), false));
    expect(out.system).toEqual([{ type: "text", text: "Long instructions.", cache_control: { type: "ephemeral", ttl: "1h" } }]);
    expect(out.messages[0].content).toEqual([{ type: "text", text: "Run it", cache_control: ephemeral }]);
    expect(out.messages[2].content[0]).toMatchObject({ type: "tool_result", content: [{ type: "text", text: "done", cache_control: ephemeral }] });
  });

  it("are left out for OpenAI-compatible providers and Gemini, which cache without them", () => {
    const openai = JSON.stringify(bodyOf(adapterFor("openai", "openai")!.buildRequest(request, target(), false)));
    const gemini = JSON.stringify(bodyOf(adapterFor("google", "google")!.buildRequest(request, target({ providerSlug: "google" }), false)));
    expect(openai).not.toContain("cache_control");
    expect(gemini).not.toContain("cache_control");
    expect(openai).toContain("Long instructions.");
  });
});
