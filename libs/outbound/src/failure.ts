import { RefusedAddressError } from "./guarded-lookup";

/** How one attempt failed: in our own words (a receiver's body is never read), and whether to try again. */
export interface AttemptFailure {
  error: string;
  httpStatus: number | null;
  retryable: boolean;
  /** A receiver's `Retry-After` (429, 503), in ms. */
  retryAfterMs?: number;
}

/** A receiver's answer other than 2xx. Redirects are never followed; 5xx and 429 are worth another try. */
export function statusFailure(status: number, retryAfter: string | undefined): AttemptFailure {
  if (status >= 300 && status < 400) {
    return { error: `the receiver answered with a redirect (HTTP ${status}), which deliveries never follow`, httpStatus: status, retryable: false };
  }
  const retryable = status >= 500 || status === 429;
  const failure: AttemptFailure = { error: `the receiver answered HTTP ${status}`, httpStatus: status, retryable };
  const seconds = retryAfter !== undefined && /^\d{1,6}$/.test(retryAfter.trim()) ? Number(retryAfter) : undefined;
  if (retryable && seconds !== undefined) failure.retryAfterMs = seconds * 1000;
  return failure;
}

const TLS_CODES = /^(CERT_|ERR_TLS_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_|ERR_SSL_|HOSTNAME_MISMATCH)/;

function codeOf(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string") return code;
  }
  return undefined;
}

function refusalOf(err: unknown): RefusedAddressError | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof RefusedAddressError) return e;
  }
  return undefined;
}

/** A connection-level failure (no HTTP answer), named by its error code; never the error's own text. */
export function connectionFailure(err: unknown, timedOut: boolean, timeoutMs: number): AttemptFailure {
  if (timedOut) return { error: `the receiver did not answer within ${timeoutMs} ms`, httpStatus: null, retryable: true };
  const refusal = refusalOf(err);
  if (refusal) return { error: refusal.message, httpStatus: null, retryable: false };
  const code = codeOf(err) ?? "unknown";
  if (code === "ENOTFOUND") return { error: "the target's host name does not resolve", httpStatus: null, retryable: false };
  if (code === "EAI_AGAIN") return { error: "the target's host name could not be resolved", httpStatus: null, retryable: true };
  if (code === "ECONNREFUSED") return { error: "the receiver refused the connection", httpStatus: null, retryable: true };
  if (code === "ETIMEDOUT" || code === "UND_ERR_CONNECT_TIMEOUT" || code === "UND_ERR_HEADERS_TIMEOUT") {
    return { error: `the receiver did not answer within ${timeoutMs} ms`, httpStatus: null, retryable: true };
  }
  if (TLS_CODES.test(code)) {
    return { error: `the receiver's TLS certificate was not accepted (${code})`, httpStatus: null, retryable: false };
  }
  if (code === "ECONNRESET" || code === "EPIPE" || code === "UND_ERR_SOCKET" || code === "UND_ERR_CLOSED") {
    return { error: "the connection closed before the receiver answered", httpStatus: null, retryable: true };
  }
  return { error: `the delivery could not connect (${code})`, httpStatus: null, retryable: true };
}
