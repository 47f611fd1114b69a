/** JSON-RPC 2.0 error codes this server answers with itself, before the SDK sees a message. */
export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;

/** The protocol revision this server speaks, whatever a client proposes. */
export const MCP_PROTOCOL_VERSION = "2025-06-18";

export class JsonRpcRefusal extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * An id the SDK accepts (it types ids as string or integer) standing in for an explicit `"id": null`,
 * which JSON-RPC allows and the product counts as a request. Two ASCII bytes that JSON writes
 * unescaped, so `"id":"~\x7f"` and `"id":null` have the same length and the answer can be patched
 * in place.
 */
export const NULL_ID_STAND_IN = "~\u007f";
export const NULL_ID_PATTERN = `"id":"${NULL_ID_STAND_IN}"`;
export const NULL_ID_ANSWER = `"id":null`;

export interface CheckedMessage {
  message: Record<string, unknown>;
  /** The client sent `"id": null`. */
  nullId: boolean;
}

/**
 * What the SDK's transport should not have to judge: a body that is not one JSON-RPC object
 * (batching was removed in 2025-06-18 and is refused), the explicit null id, and the protocol
 * revision an `initialize` proposes (pinned to the one this server speaks).
 */
export function checkMessage(body: unknown): CheckedMessage {
  if (Array.isArray(body)) throw new JsonRpcRefusal(INVALID_REQUEST, "batching is not supported (removed in MCP 2025-06-18): send one message per request");
  if (body === null || typeof body !== "object") throw new JsonRpcRefusal(INVALID_REQUEST, "expected one JSON-RPC 2.0 message object");
  const message = { ...(body as Record<string, unknown>) };
  if (message.jsonrpc !== "2.0") throw new JsonRpcRefusal(INVALID_REQUEST, 'jsonrpc: must be "2.0"');
  if ("method" in message && typeof message.method !== "string") throw new JsonRpcRefusal(INVALID_REQUEST, "method: must be a string");
  const nullId = "id" in message && message.id === null;
  if (nullId) message.id = NULL_ID_STAND_IN;
  if ("id" in message && !nullId && typeof message.id !== "string" && !Number.isInteger(message.id)) {
    throw new JsonRpcRefusal(INVALID_REQUEST, "id: must be a string, an integer or null");
  }
  if ("params" in message && (message.params === null || typeof message.params !== "object" || Array.isArray(message.params))) {
    throw new JsonRpcRefusal(INVALID_REQUEST, "params: must be an object");
  }
  if (message.method === "initialize" && message.params && typeof message.params === "object") {
    message.params = { ...(message.params as Record<string, unknown>), protocolVersion: MCP_PROTOCOL_VERSION };
  }
  return { message, nullId };
}

export function jsonRpcError(code: number, message: string): { jsonrpc: "2.0"; id: null; error: { code: number; message: string } } {
  return { jsonrpc: "2.0", id: null, error: { code, message } };
}
