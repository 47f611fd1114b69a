import { replyText, replyUsage, textPieces, toolArguments, type FakeReply, type FakeUpstream, type FakeUpstreamOptions } from "./script";
import { sse, startFakeProvider, type Frame, type ProviderWire } from "./server";

const STATUSES: Record<number, string> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  429: "RESOURCE_EXHAUSTED",
  500: "INTERNAL",
  503: "UNAVAILABLE",
  504: "DEADLINE_EXCEEDED",
};

// `models/{model}:generateContent` where the model may itself contain dots and dashes.
const ROUTE = /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent)$/;

function usageOf(reply: FakeReply) {
  const u = replyUsage(reply);
  const usage: Record<string, number> = {
    promptTokenCount: u.prompt,
    candidatesTokenCount: u.completion - u.reasoning,
    totalTokenCount: u.prompt + u.completion,
  };
  if (u.cached) usage.cachedContentTokenCount = u.cached;
  if (u.reasoning) usage.thoughtsTokenCount = u.reasoning;
  return usage;
}

const parseArgs = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return {};
  }
};

const finishOf = (reply: FakeReply) => reply.finishReason ?? "STOP";

/** Google Gemini API (`generateContent`, `streamGenerateContent?alt=sse`). */
export const geminiWire: ProviderWire = {
  basePath: "/v1beta",
  route(method, path) {
    const m = method === "POST" ? ROUTE.exec(path) : null;
    if (!m) return null;
    return { stream: m[2] === "streamGenerateContent", model: m[1] ?? "unknown" };
  },
  reject(req) {
    if (req.headers["x-goog-api-key"] || req.query.key) return null;
    return { status: 403, code: "PERMISSION_DENIED", message: "Method doesn't allow unregistered callers." };
  },
  errorBody(status, code, message) {
    return { error: { code: status, message: message ?? `fake upstream error ${status}`, status: code ?? STATUSES[status] ?? (status >= 500 ? "INTERNAL" : "INVALID_ARGUMENT") } };
  },
  json(reply, _req, model) {
    const parts: unknown[] = [];
    if (reply.reasoning) parts.push({ text: reply.reasoning, thought: true });
    const text = replyText(reply);
    if (text) parts.push({ text });
    for (const c of reply.toolCalls ?? []) parts.push({ functionCall: { name: c.name, args: parseArgs(toolArguments(c)) } });
    return {
      candidates: [{ content: { parts, role: "model" }, finishReason: finishOf(reply), index: 0 }],
      usageMetadata: usageOf(reply),
      modelVersion: model,
      responseId: "resp-fake123",
    };
  },
  frames(reply, _req, model) {
    const usage = usageOf(reply);
    const frame = (parts: unknown[], extra: Record<string, unknown> = {}) =>
      sse({
        candidates: [{ content: { parts, role: "model" }, index: 0, ...extra }],
        usageMetadata: { promptTokenCount: usage.promptTokenCount, totalTokenCount: usage.promptTokenCount },
        modelVersion: model,
        responseId: "resp-fake123",
      });
    const frames: Frame[] = [];
    for (const piece of reply.reasoning?.match(/\S+\s*/g) ?? []) frames.push({ text: frame([{ text: piece, thought: true }]), content: true });
    for (const piece of textPieces(reply)) frames.push({ text: frame([{ text: piece }]), content: true });
    for (const c of reply.toolCalls ?? []) frames.push({ text: frame([{ functionCall: { name: c.name, args: parseArgs(toolArguments(c)) } }]), content: true });
    frames.push({
      text: sse({
        candidates: [{ content: { parts: [{ text: "" }], role: "model" }, finishReason: finishOf(reply), index: 0 }],
        usageMetadata: usage,
        modelVersion: model,
        responseId: "resp-fake123",
      }),
      content: false,
    });
    return frames;
  },
  errorFrame(code, message) {
    return sse({ error: { code: 503, message: message ?? "The model is overloaded. Please try again later.", status: code ?? "UNAVAILABLE" } });
  },
};

/** Starts a fake Gemini API; `url` ends in `/v1beta`. */
export function startFakeGemini(opts?: FakeUpstreamOptions): Promise<FakeUpstream> {
  return startFakeProvider(geminiWire, opts);
}
