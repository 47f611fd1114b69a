/**
 * Chat request bodies that are wrong in exactly one field, each with the field a 400 must name.
 * `ok` is a valid body (a model and messages) that every case starts from.
 */
export function badChatRequests(ok: { model: string; messages: unknown[] }): Array<[field: string, body: unknown]> {
  const user = (content: unknown) => ({ ...ok, messages: [{ role: "user", content }] });
  const hello = [{ role: "user", content: "Hello" }];
  return [
    ["model", { ...ok, model: 42 }],
    ["models", { ...ok, models: ok.model }],
    ["messages", { model: ok.model, messages: [] }],
    ["messages", { model: ok.model }],
    ["messages.0.role", { ...ok, messages: [{ role: "robot", content: "x" }] }],
    ["messages.0.content", { ...ok, messages: [{ role: "user" }] }],
    ["messages.0.content", user([{ type: "audio", data: "x" }])],
    ["messages.0.content.0.image_url.url", user([{ type: "image_url", image_url: { url: "ftp://example.com/a.png" } }])],
    ["messages.0.tool_call_id", { ...ok, messages: [{ role: "tool", content: "x" }] }],
    [
      "messages.1.tool_calls.0.function.arguments",
      { ...ok, messages: [...hello, { role: "assistant", tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: "{oops" } }] }] },
    ],
    [
      "messages.1.reasoning_details",
      { ...ok, messages: [...hello, { role: "assistant", content: "x", reasoning_details: { type: "reasoning.text" } }] },
    ],
    [
      "messages.1.reasoning_details.0.signature",
      { ...ok, messages: [...hello, { role: "assistant", content: "x", reasoning_details: [{ type: "reasoning.text", text: "t", signature: 5 }] }] },
    ],
    [
      "messages.1.reasoning_details.0.data",
      { ...ok, messages: [...hello, { role: "assistant", content: "x", reasoning_details: [{ type: "reasoning.encrypted", data: "" }] }] },
    ],
    ["prompt", { model: ok.model, prompt: 7 }],
    ["stream", { ...ok, stream: "yes" }],
    ["max_tokens", { ...ok, max_tokens: 0 }],
    ["max_tokens", { ...ok, max_tokens: 1.5 }],
    ["max_completion_tokens", { ...ok, max_completion_tokens: "100" }],
    ["temperature", { ...ok, temperature: 2.5 }],
    ["top_p", { ...ok, top_p: 1.2 }],
    ["top_k", { ...ok, top_k: 0.5 }],
    ["stop", { ...ok, stop: 5 }],
    ["stop", { ...ok, stop: Array.from({ length: 17 }, (_, i) => `s${i}`) }],
    ["seed", { ...ok, seed: 1.5 }],
    ["tools", { ...ok, tools: { type: "function" } }],
    ["tools.0.type", { ...ok, tools: [{ type: "retrieval" }] }],
    ["tools.0.function.name", { ...ok, tools: [{ type: "function", function: { name: "has spaces" } }] }],
    ["tool_choice", { ...ok, tool_choice: "sometimes" }],
    ["response_format.type", { ...ok, response_format: { type: "yaml" } }],
    ["reasoning.effort", { ...ok, reasoning: { effort: "extreme" } }],
    ["reasoning.max_tokens", { ...ok, reasoning: { max_tokens: -1 } }],
    ["reasoning", { ...ok, reasoning: { effort: "low", max_tokens: 100 } }],
    ["provider.sort", { ...ok, provider: { sort: "random" } }],
    ["provider", { ...ok, provider: ["openai"] }],
    ["provider.order", { ...ok, provider: { order: "openai" } }],
    ["provider.only.0", { ...ok, provider: { only: [""] } }],
    ["provider.ignore", { ...ok, provider: { ignore: Array.from({ length: 65 }, (_, i) => `p${i}`) } }],
    ["provider.allow_fallbacks", { ...ok, provider: { allow_fallbacks: "no" } }],
    ["provider.require_parameters", { ...ok, provider: { require_parameters: 1 } }],
    ["provider.data_collection", { ...ok, provider: { data_collection: "never" } }],
    ["provider.zdr", { ...ok, provider: { zdr: "true" } }],
    ["provider.quantizations.0", { ...ok, provider: { quantizations: [8] } }],
    ["provider.max_price.prompt", { ...ok, provider: { max_price: { prompt: -1 } } }],
    ["provider.max_price.completion", { ...ok, provider: { max_price: { completion: 1e300 } } }],
    ["session_id", { ...ok, session_id: "" }],
    ["routing_stability", { ...ok, routing_stability: "wobbly" }],
    ["n", { ...ok, n: 2 }],
    ["body", [ok]],
  ];
}
