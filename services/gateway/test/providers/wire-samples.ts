import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseChatRequest, type ChatRequest } from "@router/chat-request";
import { StreamEventReader } from "../../src/dispatch/stream-reader";
import type { ProviderAdapter, StreamEvent, UpstreamTarget } from "@router/providers";

/** A recorded provider payload from ./fixtures. */
export function sample(name: string): string {
  return readFileSync(join(__dirname, "fixtures", name), "utf8");
}

export const sampleJson = (name: string): unknown => JSON.parse(sample(name));

/** Feeds SSE text through the adapter's decoder in small byte pieces, as a network would deliver it. */
export async function decodeStream(adapter: ProviderAdapter, text: string, pieceBytes = 7): Promise<StreamEvent[]> {
  const bytes = Buffer.from(text, "utf8");
  async function* pieces(): AsyncGenerator<Uint8Array> {
    for (let i = 0; i < bytes.length; i += pieceBytes) yield bytes.subarray(i, i + pieceBytes);
  }
  const reader = new StreamEventReader(pieces(), adapter.createStreamDecoder());
  const out: StreamEvent[] = [];
  for (let ev = await reader.next(); ev; ev = await reader.next()) out.push(ev);
  return out;
}

/** Concatenated text, reasoning and tool-call arguments of decoded chunks. */
export function collect(events: StreamEvent[]) {
  let content = "";
  let reasoning = "";
  const tools: Record<number, { id?: string; name?: string; arguments: string }> = {};
  const finishes: { finish: string | null; native: string | null }[] = [];
  for (const ev of events) {
    if (ev.type !== "chunk") continue;
    for (const c of ev.choices) {
      content += c.delta.content ?? "";
      reasoning += c.delta.reasoning ?? "";
      for (const t of c.delta.tool_calls ?? []) {
        const slot = (tools[t.index] ??= { arguments: "" });
        if (t.id) slot.id = t.id;
        if (t.function?.name) slot.name = t.function.name;
        slot.arguments += t.function?.arguments ?? "";
      }
      if (c.finish_reason) finishes.push({ finish: c.finish_reason, native: c.native_finish_reason });
    }
  }
  const usages = events.filter((e): e is StreamEvent & { type: "usage" } => e.type === "usage");
  return { content, reasoning, tools, finishes, usage: usages[usages.length - 1]?.usage ?? null };
}

export function chat(body: Record<string, unknown>): ChatRequest {
  return parseChatRequest({ model: "x/y", messages: [{ role: "user", content: "Hi" }], ...body });
}

export function target(overrides: Partial<UpstreamTarget> = {}): UpstreamTarget {
  return {
    providerSlug: "openai",
    baseUrl: "https://api.example.test/v1",
    modelId: "x/y",
    upstreamModel: "model-upstream",
    apiKey: "sk-test-123",
    cloud: null,
    region: null,
    maxOutputTokens: 8192,
    vendorBeta: null,
    ...overrides,
  };
}

export const bodyOf = (r: { body: string }): Record<string, any> => JSON.parse(r.body);

/** What `f` throws, or null when it returns: for asserting on an error's type and fields. */
export function thrown(f: () => unknown): unknown {
  try {
    f();
  } catch (err) {
    return err;
  }
  return null;
}
