/**
 * The typed error domain code throws. Each edge (HTTP, gRPC) maps it in one table; nothing else
 * decides a status code.
 */
export type ErrorCode =
  | "invalid_request"
  | "unauthorized"
  | "permission_denied"
  | "not_found"
  | "conflict"
  | "rate_limited"
  | "budget_exceeded"
  | "key_paused"
  | "content_filtered"
  | "insufficient_credits"
  | "upstream_error"
  | "model_not_found"
  | "no_route"
  | "payload_too_large"
  | "unavailable"
  | "internal"
  | `router.${string}`;

const DEFAULT_STATUS: Record<string, number> = {
  invalid_request: 400,
  unauthorized: 401,
  insufficient_credits: 402,
  permission_denied: 403,
  budget_exceeded: 403,
  key_paused: 403,
  content_filtered: 403,
  not_found: 404,
  model_not_found: 404,
  no_route: 404,
  conflict: 409,
  payload_too_large: 413,
  rate_limited: 429,
  internal: 500,
  upstream_error: 502,
  unavailable: 503,
};

export class DomainError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    opts: { status?: number; details?: Record<string, unknown>; cause?: unknown } = {},
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = "DomainError";
    this.status = opts.status ?? DEFAULT_STATUS[code] ?? (code.startsWith("router.") ? 503 : 500);
    this.details = opts.details;
  }
  readonly details: Record<string, unknown> | undefined;
}

export function invalid(field: string, message: string): DomainError {
  return new DomainError("invalid_request", `${field}: ${message}`, { details: { field } });
}

export function notFound(what: string): DomainError {
  return new DomainError("not_found", `${what} not found`);
}
