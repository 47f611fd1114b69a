import type { IncomingMessage } from "node:http";
import type { ErrorBody } from "@router/http-kit";

/** Which format a request came in by; recorded on `router.request.completed.v1` as `ingress`. */
export type IngressName = "chat_completions" | "responses" | "anthropic_messages" | "embeddings";

/** What every way in has: its route, its own header names and its error shape. */
export interface IngressBase {
  name: IngressName;
  /** The route, e.g. `/v1/responses`. */
  path: string;
  /** Reads the format's own header names into the router's (e.g. `x-api-key`), before authentication. */
  prepare?: (req: IncomingMessage) => void;
  /** The format's error body for the router's error (status, code, message, details). */
  errorBody: (error: ErrorBody["error"]) => Record<string, unknown>;
  /** The status an overloaded provider is answered with (`router.upstream_overloaded`); default 503, Anthropic's is 529. */
  overloadedStatus?: number;
  /** The JSON body limit of the route (a body past it is a 413 in the format's error shape); default the gateway's. */
  bodyLimit?: string;
}
