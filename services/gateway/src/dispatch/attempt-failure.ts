/** Why one upstream attempt failed, and what that means for the cascade. */
export type FailureKind =
  /** The provider answered with an error status. */
  | "http"
  /** No headers, or no next chunk, within the time allowed. */
  | "timeout"
  /** Connection refused, reset or closed. */
  | "connection"
  /** A stream that ended before its first content chunk. */
  | "empty_stream"
  /** An error event inside the stream. */
  | "stream_error"
  /** An answer (or a stream's first chunk) finishing with `error` and nothing in it. */
  | "error_finish"
  /** The stream broke or stalled after content was sent. */
  | "stream_broken"
  /** A 2xx answer that is not what the provider's format promises. */
  | "bad_response"
  /** The request cannot be expressed for this provider. */
  | "unsupported"
  /** Router could not build or send the request: the provider never saw it, so it says nothing of the endpoint. */
  | "not_sent"
  /** The credential could not prove who is calling (a cloud's token or role was refused). */
  | "auth"
  /** The client went away. */
  | "cancelled";

const ROUTER_CODES: Record<Exclude<FailureKind, "http" | "stream_error" | "error_finish">, string> = {
  timeout: "router.upstream_timeout",
  connection: "router.upstream_unreachable",
  empty_stream: "router.upstream_empty_stream",
  stream_broken: "router.upstream_stream_broken",
  bad_response: "router.upstream_bad_response",
  unsupported: "router.unsupported_request",
  not_sent: "router.request_not_sent",
  auth: "router.upstream_auth_failed",
  cancelled: "router.client_cancelled",
};

/** What a provider error code looks like: `invalid_api_key`, `rate_limit_exceeded`, `overloaded_error`. */
const PROVIDER_CODE = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;

/** HTTP statuses that say "not here" rather than "not this request": another endpoint may serve. */
const FAILOVER_STATUSES = new Set([401, 403, 404, 408, 429]);
/** Statuses about the key that was used: unauthorised, forbidden, rate-limited. */
const CREDENTIAL_STATUSES = new Set([401, 403, 429]);

export class AttemptFailure extends Error {
  constructor(
    readonly kind: FailureKind,
    readonly providerSlug: string,
    readonly opts: {
      httpStatus?: number | null;
      providerCode?: string | null;
      /** The provider's own words: for the caller of this request only, never recorded. */
      providerMessage?: string | null;
      retryAfter?: string | null;
      /** What went wrong on the wire (`ECONNRESET`, `UND_ERR_HEADERS_TIMEOUT`, a wait in ms). */
      detail?: string | null;
    } = {},
  ) {
    super(`${providerSlug}: ${kind}`);
    this.name = "AttemptFailure";
  }

  get httpStatus(): number | null {
    return this.opts.httpStatus ?? null;
  }

  /**
   * The provider's error code when it looks like a code. Some OpenAI-compatible servers put a
   * sentence, or an echo of the prompt, where the code goes; records must never keep provider text.
   */
  get providerCode(): string | null {
    const c = this.opts.providerCode;
    return c && PROVIDER_CODE.test(c) ? c : null;
  }

  /** The provider's own code when it gave one, else a `router.*` reason code. */
  get code(): string {
    const providerCode = this.providerCode;
    if (this.kind === "http") return providerCode ?? `http_${this.httpStatus ?? 0}`;
    if (this.kind === "stream_error") return providerCode ?? "router.upstream_stream_error";
    if (this.kind === "error_finish") return providerCode ?? "router.upstream_error_finish";
    if (this.kind === "bad_response" && providerCode) return providerCode;
    return ROUTER_CODES[this.kind];
  }

  /** Whether the cascade moves on to the next endpoint (only ever before the first content chunk). */
  get failover(): boolean {
    if (this.kind === "cancelled") return false;
    if (this.kind === "http") {
      const s = this.httpStatus ?? 0;
      return s >= 500 || FAILOVER_STATUSES.has(s);
    }
    return true;
  }

  /**
   * Whether the failure belongs to the credential rather than the endpoint (a rejected or
   * rate-limited key): the same endpoint may still serve with the organisation's next credential.
   */
  get credentialSpecific(): boolean {
    return this.kind === "auth" || (this.kind === "http" && CREDENTIAL_STATUSES.has(this.httpStatus ?? 0));
  }

  /** Whether the failure says the endpoint is unhealthy (feeds its circuit breaker). */
  get countsAgainstEndpoint(): boolean {
    if (this.kind === "http") return (this.httpStatus ?? 0) >= 500;
    return this.kind !== "unsupported" && this.kind !== "not_sent" && this.kind !== "auth" && this.kind !== "cancelled";
  }

  /** For records: names the provider, its status and code, never the provider's own text. */
  get recordMessage(): string {
    const p = this.providerSlug;
    const d = this.opts.detail;
    switch (this.kind) {
      case "http":
        return `${p} returned HTTP ${this.httpStatus ?? "?"}${this.providerCode ? ` (${this.providerCode})` : ""}`;
      case "timeout":
        return `${p} did not answer in time${d ? ` (${d})` : ""}`;
      case "connection":
        return `${p} could not be reached${d ? ` (${d})` : ""}`;
      case "empty_stream":
        return `${p} ended the stream before any content`;
      case "stream_error":
        return `${p} sent an error event in the stream${this.providerCode ? ` (${this.providerCode})` : ""}`;
      case "error_finish":
        return `${p} ended its answer with an error before any content${this.providerCode ? ` (${this.providerCode})` : ""}`;
      case "stream_broken":
        return `${p} stream broke after content was sent${d ? ` (${d})` : ""}`;
      case "bad_response":
        return `${p} sent a response the router could not read${d ? ` (${d})` : ""}`;
      case "unsupported":
        return `the request cannot be expressed for ${p}${d ? `: ${d}` : ""}`;
      case "not_sent":
        return `the router could not send the request to ${p}${d ? ` (${d})` : ""}`;
      case "auth":
        return `${p} credential could not be used${d ? ` (${d})` : ""}`;
      case "cancelled":
        return `the client closed the connection while ${p} was answering`;
    }
  }

  /** For the caller of this request: the record message plus the provider's own words. */
  get clientMessage(): string {
    const words = this.opts.providerMessage?.slice(0, 1000);
    return words ? `${this.recordMessage}: ${words}` : this.recordMessage;
  }
}

const TIMEOUT_CODES = new Set(["UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT", "UND_ERR_CONNECT_TIMEOUT", "ETIMEDOUT"]);
/** undici refusing the request before any byte left (an unusable header value or URL): Router's fault, not the endpoint's. */
const NOT_SENT_CODES = new Set(["UND_ERR_INVALID_ARG", "ERR_INVALID_URL", "ERR_INVALID_CHAR", "ERR_INVALID_HTTP_TOKEN"]);

/**
 * A request body that could not be built (a serialisation or adapter error): only the error's name
 * is kept, since its message could quote the request.
 */
export function notSent(err: unknown, providerSlug: string): AttemptFailure {
  const name = err instanceof Error ? err.name : typeof err;
  return new AttemptFailure("not_sent", providerSlug, { detail: name });
}

/** Classifies an error thrown by the HTTP client or while reading a body. */
export function failureFromError(err: unknown, providerSlug: string, aborted: boolean, committed: boolean): AttemptFailure {
  if (err instanceof AttemptFailure) return err;
  if (aborted) return new AttemptFailure("cancelled", providerSlug);
  const e = err as { code?: unknown; name?: unknown; cause?: { code?: unknown } };
  const code = typeof e?.code === "string" ? e.code : typeof e?.cause?.code === "string" ? e.cause.code : null;
  if (committed) return new AttemptFailure("stream_broken", providerSlug, { detail: code });
  if (code && NOT_SENT_CODES.has(code)) return new AttemptFailure("not_sent", providerSlug, { detail: code });
  if (code && TIMEOUT_CODES.has(code)) return new AttemptFailure("timeout", providerSlug, { detail: code });
  return new AttemptFailure("connection", providerSlug, { detail: code ?? (typeof e?.name === "string" ? e.name : null) });
}
