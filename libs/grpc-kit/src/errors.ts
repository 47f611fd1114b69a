import * as grpc from "@grpc/grpc-js";
import { DomainError } from "@router/errors";

// One table from domain codes to gRPC codes and back; nothing is flattened to INTERNAL unless it is.
const TO_GRPC: Record<string, grpc.status> = {
  invalid_request: grpc.status.INVALID_ARGUMENT,
  unauthorized: grpc.status.UNAUTHENTICATED,
  permission_denied: grpc.status.PERMISSION_DENIED,
  not_found: grpc.status.NOT_FOUND,
  conflict: grpc.status.ALREADY_EXISTS,
  rate_limited: grpc.status.RESOURCE_EXHAUSTED,
  unavailable: grpc.status.UNAVAILABLE,
};

export function toGrpcError(err: unknown): Partial<grpc.StatusObject> & { code: grpc.status } {
  if (err instanceof DomainError) {
    const metadata = new grpc.Metadata();
    metadata.set("router-error-code", err.code);
    // Status and details cross too: an explicit status (a 409 on a `router.*` code) or details.field
    // would otherwise be lost. Details go as -bin so non-ASCII text is legal metadata.
    metadata.set("router-error-status", String(err.status));
    if (err.details) metadata.set("router-error-details-bin", Buffer.from(JSON.stringify(err.details)));
    return { code: TO_GRPC[err.code] ?? grpc.status.FAILED_PRECONDITION, details: err.message, metadata };
  }
  return { code: grpc.status.INTERNAL, details: "internal error" };
}

/**
 * Maps a failed downstream call to a DomainError for the HTTP edge: an unreachable or slow
 * dependency is a 503 with a `router.<service>_unavailable` code, never a hang or a bare 500.
 */
export function fromGrpcError(err: unknown, service: string): DomainError {
  const e = err as Partial<grpc.ServiceError>;
  const code = e.metadata?.get("router-error-code")[0];
  if (typeof code === "string" && e.details) {
    return new DomainError(code as DomainError["code"], e.details, {
      status: errorStatus(e.metadata?.get("router-error-status")[0]),
      details: errorDetails(e.metadata?.get("router-error-details-bin")[0]),
    });
  }
  switch (e.code) {
    case grpc.status.INVALID_ARGUMENT:
      return new DomainError("invalid_request", e.details ?? "invalid request");
    case grpc.status.NOT_FOUND:
      return new DomainError("not_found", e.details ?? "not found");
    case grpc.status.DEADLINE_EXCEEDED:
      return new DomainError(`router.${service}_timeout`, `the ${service} service did not answer in time`, {
        status: 503,
        cause: err,
      });
    default:
      return new DomainError(`router.${service}_unavailable`, `the ${service} service is unavailable`, {
        status: 503,
        cause: err,
      });
  }
}

function errorStatus(value: grpc.MetadataValue | undefined): number | undefined {
  const status = Number(value);
  return Number.isInteger(status) && status >= 400 && status <= 599 ? status : undefined;
}

function errorDetails(value: grpc.MetadataValue | undefined): Record<string, unknown> | undefined {
  if (!Buffer.isBuffer(value)) return undefined;
  try {
    const parsed: unknown = JSON.parse(value.toString("utf8"));
    return parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
