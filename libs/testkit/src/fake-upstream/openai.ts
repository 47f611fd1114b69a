import { argumentPieces, replyText, replyUsage, textPieces, toolArguments, type FakeReply, type FakeUpstream, type FakeUpstreamOptions, type RecordedRequest } from "./script";
import { sse, startFakeProvider, type Frame, type ProviderWire } from "./server";

const DEFAULT_CODES: Record<number, [type: string, code: string]> = {
  400: ["invalid_request_error", "invalid_request"],
  401: ["invalid_request_error", "invalid_api_key"],
  403: ["invalid_request_error", "unsupported_country_region_territory"],
  404: ["invalid_request_error", "model_not_found"],
  429: ["requests", "rate_limit_exceeded"],
  500: ["server_error", "server_error"],
  503: ["server_error", "service_unavailable"],
};

interface OpenAiBody {
  model?: string;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
}

const asBody = (b: unknown): OpenAiBody => (b && typeof b === "object" ? (b as OpenAiBody) : {});

function finishOf(reply: FakeReply): string {
  return reply.finishReason ?? (reply.toolCalls?.length ? "tool_calls" : "stop");
}

function usageBody(reply: FakeReply) {
  const u = replyUsage(reply);
  return {
    prompt_tokens: u.prompt,
    completion_tokens: u.completion,
    total_tokens: u.prompt + u.completion,
    prompt_tokens_details: { cached_tokens: u.cached, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: u.reasoning, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  };
}

const toolCallId = (i: number, id?: string) => id ?? `call_fake${i}`;

/** OpenAI Chat Completions (and every OpenAI-compatible server): JSON and SSE. */
export const openAiWire: ProviderWire = {
  basePath: "/v1",
  route(method, path, _query, body) {
    if (method !== "POST" || (path !== "/v1/chat/completions" && path !== "/chat/completions")) return null;
    const b = asBody(body);
    return { stream: b.stream === true, model: b.model ?? "unknown" };
  },
  reject(req: RecordedRequest) {
    const auth = req.headers["authorization"] ?? "";
    return auth.startsWith("Bearer ") && auth.length > 7
      ? null
      : { status: 401, code: "invalid_api_key", message: "You didn't provide an API key." };
  },
  errorBody(status, code, message) {
    const [type, defaultCode] = DEFAULT_CODES[status] ?? (status >= 500 ? ["server_error", "server_error"] : ["invalid_request_error", "invalid_request"]);
    return { error: { message: message ?? `fake upstream error ${status}`, type, param: null, code: code ?? defaultCode } };
  },
  json(reply, _req, model) {
    const text = replyText(reply);
    const message: Record<string, unknown> = { role: "assistant", content: text || (reply.toolCalls?.length ? null : ""), refusal: null };
    if (reply.reasoning) message.reasoning_content = reply.reasoning;
    if (reply.toolCalls?.length) {
      message.tool_calls = reply.toolCalls.map((c, i) => ({
        id: toolCallId(i, c.id),
        type: "function",
        function: { name: c.name, arguments: toolArguments(c) },
      }));
    }
    return {
      id: "chatcmpl-fake123",
      object: "chat.completion",
      created: Math.floor(Date.now() / 1000),
      model,
      system_fingerprint: "fp_fake",
      choices: [{ index: 0, message, logprobs: null, finish_reason: finishOf(reply) }],
      ...(reply.usage === null ? {} : { usage: usageBody(reply) }),
    };
  },
  frames(reply, req, model) {
    const created = Math.floor(Date.now() / 1000);
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
      sse({
        id: "chatcmpl-fake123",
        object: "chat.completion.chunk",
        created,
        model,
        system_fingerprint: "fp_fake",
        choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      });
    const frames: Frame[] = [{ text: chunk({ role: "assistant", content: "", refusal: null }), content: false }];
    if (reply.reasoning) {
      for (const piece of reply.reasoning.match(/\S+\s*/g) ?? []) frames.push({ text: chunk({ reasoning_content: piece }), content: true });
    }
    for (const piece of textPieces(reply)) frames.push({ text: chunk({ content: piece }), content: true });
    (reply.toolCalls ?? []).forEach((c, i) => {
      frames.push({
        text: chunk({ tool_calls: [{ index: i, id: toolCallId(i, c.id), type: "function", function: { name: c.name, arguments: "" } }] }),
        content: true,
      });
      for (const piece of argumentPieces(c)) {
        frames.push({ text: chunk({ tool_calls: [{ index: i, function: { arguments: piece } }] }), content: true });
      }
    });
    frames.push({ text: chunk({}, finishOf(reply)), content: false });
    if (asBody(req.body).stream_options?.include_usage && reply.usage !== null) {
      frames.push({
        text: sse({ id: "chatcmpl-fake123", object: "chat.completion.chunk", created, model, system_fingerprint: "fp_fake", choices: [], usage: usageBody(reply) }),
        content: false,
      });
    }
    frames.push({ text: sse("[DONE]"), content: false });
    return frames;
  },
  errorFrame(code, message) {
    return sse({ error: { message: message ?? "The server had an error while processing your request.", type: "server_error", param: null, code: code ?? "server_error" } });
  },
};

/** Starts a fake OpenAI-compatible provider; `url` ends in `/v1` like `https://api.openai.com/v1`. */
export function startFakeOpenAi(opts?: FakeUpstreamOptions): Promise<FakeUpstream> {
  return startFakeProvider(openAiWire, opts);
}
