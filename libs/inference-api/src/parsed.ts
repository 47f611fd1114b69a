import type { ChatRequest } from "@router/chat-request";
import type { ApiFamily, EmbeddingsRequest } from "@router/providers";
import type { ClientToolNames } from "./client-tool-names";

/**
 * The client's own body, for an endpoint whose provider speaks the same wire format: every field
 * Router does not act on (cache markers, beta features, block types it does not model, fields that
 * do not exist yet) reaches the provider unchanged. Router's own fields never do: the ingress or
 * the adapter that sends the body leaves them out.
 */
export interface NativeBody {
  /** The provider wire family the body is written in. */
  family: ApiFamily;
  body: Record<string, unknown>;
}

/** A request in the internal shape, and what the format's answer repeats of it. */
export interface ParsedRequest {
  request: ChatRequest;
  /** Request settings the answer echoes (the Responses format does); null when none. */
  echo: Record<string, unknown> | null;
  /** The body as the client wrote it, for same-family endpoints; absent when the format has none. */
  native?: NativeBody;
  /**
   * Built-in tools the request names (run by a provider, e.g. `web_search`), by name: each is
   * dropped for an endpoint that cannot run it (chat/builtin-tools.ts). Absent when none.
   */
  builtinTools?: string[];
  /** Tools Router renamed for providers, to render their calls back (client-tool-names.ts). */
  toolNames?: ClientToolNames;
  /** The input items a stored answer keeps with it (Responses `store`); absent when the format keeps none. */
  storedInput?: Record<string, unknown>[];
}

/**
 * An embeddings request parsed: the texts as one user message each (so routing, the worst case and
 * content filters see them as they see a chat request's messages) and what only embeddings take.
 */
export interface ParsedEmbeddings {
  request: ChatRequest;
  options: Omit<EmbeddingsRequest, "input">;
}
