import { DomainError, invalid, notFound, type ErrorCode } from "@router/errors";

describe("DomainError default statuses", () => {
  it.each<[ErrorCode, number]>([
    ["invalid_request", 400],
    ["unauthorized", 401],
    ["insufficient_credits", 402],
    ["permission_denied", 403],
    ["budget_exceeded", 403],
    ["key_paused", 403],
    ["not_found", 404],
    ["model_not_found", 404],
    ["no_route", 404],
    ["conflict", 409],
    ["payload_too_large", 413],
    ["rate_limited", 429],
    ["internal", 500],
    ["upstream_error", 502],
    ["unavailable", 503],
  ])("gives %s the status %i", (code, status) => {
    expect(new DomainError(code, "m").status).toBe(status);
  });

  it("treats an unlisted router.* code as a dependency failure (503)", () => {
    expect(new DomainError("router.ledger_unavailable", "m").status).toBe(503);
  });

  it("lets an explicit status override the default", () => {
    expect(new DomainError("router.run_closed", "m", { status: 409 }).status).toBe(409);
    expect(new DomainError("invalid_request", "m", { status: 422 }).status).toBe(422);
  });
});

describe("DomainError", () => {
  it("is an Error with its name, code, message and details", () => {
    const err = new DomainError("budget_exceeded", "key limit reached", { details: { scope: "key" } });
    expect(err).toBeInstanceOf(Error);
    expect(err).toMatchObject({ name: "DomainError", code: "budget_exceeded", message: "key limit reached" });
    expect(err.details).toEqual({ scope: "key" });
  });

  it("has no details unless given", () => {
    expect(new DomainError("conflict", "m").details).toBeUndefined();
  });

  it("keeps the cause it wraps", () => {
    const cause = new Error("socket hang up");
    expect(new DomainError("upstream_error", "m", { cause }).cause).toBe(cause);
  });

  it("has no cause unless given", () => {
    expect("cause" in new DomainError("conflict", "m")).toBe(false);
  });
});

describe("invalid", () => {
  it("is a 400 whose message and details name the field", () => {
    const err = invalid("messages.0.role", "must be one of system, user, assistant");
    expect(err).toMatchObject({
      code: "invalid_request",
      status: 400,
      message: "messages.0.role: must be one of system, user, assistant",
      details: { field: "messages.0.role" },
    });
  });
});

describe("notFound", () => {
  it("is a 404 naming what was not found", () => {
    expect(notFound("generation gen-123")).toMatchObject({
      code: "not_found",
      status: 404,
      message: "generation gen-123 not found",
    });
  });
});
