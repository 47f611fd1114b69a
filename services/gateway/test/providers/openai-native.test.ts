import { parseChatRequest } from "../../src/chat/request-schema";
import { adapterFor } from "../../src/providers/registry";
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

  it("passes every field Router does not read as the client wrote it, and none of Router's own", () => {
    const out = sent("openai", body);
    expect(out).toMatchObject({ model: "model-upstream", service_tier: "flex", verbosity: "low", metadata: { team: "search" }, logprobs: true, max_completion_tokens: 100 });
    for (const own of ["provider", "usage", "session_id"]) expect(out).not.toHaveProperty(own);
    expect(out.messages).toEqual([
      { role: "system", content: [{ type: "text", text: "Be brief.", cache_control: { type: "ephemeral" } }] },
      { role: "user", content: "Hi", some_message_field: true },
    ]);
  });

  it("leaves them out for a provider that refuses unknown fields (Mistral), as a translated request", () => {
    const out = sent("mistral", body);
    for (const extra of ["service_tier", "verbosity", "metadata", "logprobs"]) expect(out).not.toHaveProperty(extra);
    expect(out.messages[1]).toEqual({ role: "user", content: "Hi" });
  });
});
