import { replyText, replyUsage, textPieces, toolArguments, type FakeReply, type FakeUpstream, type FakeUpstreamOptions } from "./script";
import { embeddingDimensions, fakeEmbedding } from "./embeddings";
import { sse, startFakeProvider, type ProviderWire } from "./server";

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
const ROUTE = /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent|batchEmbedContents|embedContent)$/;

interface EmbedContentRequest {
  content?: { parts?: Array<{ text?: string }> };
  outputDimensionality?: number;
}

/** `embedContent` answers `{embedding: {values}}`, `batchEmbedContents` `{embeddings: [{values}]}`; neither reports tokens. */
function embeddingsBody(reply: FakeReply, path: string, body: unknown): unknown {
  const values = (r: EmbedContentRequest) =>
    fakeEmbedding((r.content?.parts ?? []).map((p) => p.text ?? "").join(""), embeddingDimensions(reply, r.outputDimensionality));
  const b = (body && typeof body === "object" ? body : {}) as { requests?: EmbedContentRequest[] } & EmbedContentRequest;
  if (path.endsWith(":embedContent")) return { embedding: { values: values(b) } };
  return { embeddings: (b.requests ?? []).map((r) => ({ values: values(r) })) };
}

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

/** The partial responses of a stream, in order, and whether each carries content. */
function streamResponses(reply: FakeReply, model: string): { response: unknown; content: boolean }[] {
  const usage = usageOf(reply);
  const partial = (parts: unknown[]) => ({
    response: {
      candidates: [{ content: { parts, role: "model" }, index: 0 }],
      usageMetadata: { promptTokenCount: usage.promptTokenCount, totalTokenCount: usage.promptTokenCount },
      modelVersion: model,
      responseId: "resp-fake123",
    },
    content: true,
  });
  const out: { response: unknown; content: boolean }[] = [];
  for (const piece of reply.reasoning?.match(/\S+\s*/g) ?? []) out.push(partial([{ text: piece, thought: true }]));
  for (const piece of textPieces(reply)) out.push(partial([{ text: piece }]));
  for (const c of reply.toolCalls ?? []) out.push(partial([{ functionCall: { name: c.name, args: parseArgs(toolArguments(c)) } }]));
  out.push({
    response: {
      candidates: [{ content: { parts: [{ text: "" }], role: "model" }, finishReason: finishOf(reply), index: 0 }],
      usageMetadata: usage,
      modelVersion: model,
      responseId: "resp-fake123",
    },
    content: false,
  });
  return out;
}

/** Google Gemini API (`generateContent`, `streamGenerateContent?alt=sse`, `batchEmbedContents`, `embedContent`). */
export const geminiWire: ProviderWire = {
  basePath: "/v1beta",
  route(method, path, query) {
    const m = method === "POST" ? ROUTE.exec(path) : null;
    if (!m) return null;
    // Without alt=sse, streamGenerateContent answers one JSON array of responses, not events.
    return { stream: m[2] === "streamGenerateContent" && query.alt === "sse", model: m[1] ?? "unknown" };
  },
  reject(req) {
    if (!req.headers["x-goog-api-key"] && !req.query.key) {
      return { status: 403, code: "PERMISSION_DENIED", message: "Method doesn't allow unregistered callers." };
    }
    // Each request of a batch names its model, and it must be the one in the path.
    const batch = /\/models\/([^/:]+):batchEmbedContents$/.exec(req.path);
    const requests = (req.body as { requests?: Array<{ model?: string }> } | null)?.requests;
    if (batch && (!Array.isArray(requests) || requests.some((r) => r.model !== `models/${batch[1]}`))) {
      return { status: 400, code: "INVALID_ARGUMENT", message: "* BatchEmbedContentsRequest.requests: every request's model must match the batch's model." };
    }
    return null;
  },
  errorBody(status, code, message) {
    return { error: { code: status, message: message ?? `fake upstream error ${status}`, status: code ?? STATUSES[status] ?? (status >= 500 ? "INTERNAL" : "INVALID_ARGUMENT") } };
  },
  json(reply, req, model) {
    if (/:(batchEmbedContents|embedContent)$/.test(req.path)) return embeddingsBody(reply, req.path, req.body);
    if (req.path.endsWith(":streamGenerateContent")) return streamResponses(reply, model).map((r) => r.response);
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
    return streamResponses(reply, model).map((r) => ({ text: sse(r.response), content: r.content }));
  },
  errorFrame(code, message) {
    return sse({ error: { code: 503, message: message ?? "The model is overloaded. Please try again later.", status: code ?? "UNAVAILABLE" } });
  },
};

/** Starts a fake Gemini API; `url` ends in `/v1beta`. */
export function startFakeGemini(opts?: FakeUpstreamOptions): Promise<FakeUpstream> {
  return startFakeProvider(geminiWire, opts);
}
