import type { ErrorBody } from "@router/http-kit";

/** OpenAI's error `type` by status. */
function errorType(status: number): string {
  if (status === 401) return "authentication_error";
  if (status === 403) return "permission_error";
  if (status === 404) return "not_found_error";
  if (status === 429) return "rate_limit_error";
  if (status >= 500) return "server_error";
  return "invalid_request_error";
}

/** The OpenAI error envelope (`message`, `type`, `param`, `code`), with the router's `status` and `details`. */
export function openAiError(e: ErrorBody["error"]): Record<string, unknown> {
  const field = e.details?.field;
  return { error: { ...e, type: errorType(e.status), param: typeof field === "string" ? field : null } };
}
