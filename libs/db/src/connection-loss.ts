import { DomainError } from "@router/errors";

/**
 * The database connection went away under a statement or transaction (a terminated backend, a
 * restart, a network drop). `unavailable` (503 at the edges): the request may be sent again once the
 * database is back. `mayHaveCommitted` says whether the work may have taken effect: false when
 * Postgres certainly rolled it back (lost before COMMIT was sent), true when the connection went
 * during COMMIT or under a statement run outside a transaction.
 */
export class ConnectionLostError extends DomainError {
  constructor(
    readonly mayHaveCommitted: boolean,
    cause: unknown,
  ) {
    super("unavailable", `the database connection was lost${mayHaveCommitted ? " (the outcome is unknown)" : ""}`, { cause });
    this.name = "ConnectionLostError";
  }
}

// Postgres closes the session after these: admin_shutdown (pg_terminate_backend), crash_shutdown,
// cannot_connect_now (starting or stopping), idle_session_timeout, idle_in_transaction_session_timeout.
const CLOSING_CODES = new Set(["57P01", "57P02", "57P03", "57P05", "25P03"]);
const SOCKET_CODES = new Set(["ECONNRESET", "ECONNREFUSED", "ECONNABORTED", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN"]);
// pg's own errors carry no code: the socket closed under a query, a client that saw that refusing
// the next one, or a new connection that did not open in time.
const PG_MESSAGES = new Set([
  "Connection terminated unexpectedly",
  "Client has encountered a connection error and is not queryable",
  "Connection terminated due to connection timeout",
  "timeout exceeded when trying to connect",
]);

/** Whether `err` says the connection to the database was lost or could not be opened. */
export function isConnectionLoss(err: unknown): boolean {
  if (err instanceof ConnectionLostError) return true;
  // Not `instanceof Error`: errors from node's own modules may come from another realm (jest's).
  if (typeof err !== "object" || err === null) return false;
  const { code, message } = err as { code?: unknown; message?: unknown };
  if (typeof code === "string") {
    // Class 08: connection exception.
    if (CLOSING_CODES.has(code) || SOCKET_CODES.has(code) || code.startsWith("08")) return true;
  }
  return typeof message === "string" && PG_MESSAGES.has(message);
}

/**
 * `err` as a ConnectionLostError when it says the connection went (one that is already stays as it
 * came); any other error unchanged.
 */
export function asConnectionLoss(err: unknown, mayHaveCommitted: boolean): unknown {
  return err instanceof ConnectionLostError || !isConnectionLoss(err) ? err : new ConnectionLostError(mayHaveCommitted, err);
}
