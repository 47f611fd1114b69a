/**
 * The dashboard's only way to the gateway: the public API, with the session cookie (sent by the
 * browser) and, on every method but GET, the `x-csrf-token` header copied from the script-readable
 * `rt_csrf` cookie. No private endpoints.
 */

/** An API refusal, carrying the error envelope's message so pages can show it as it is. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

interface Envelope<T> {
  data: T;
  next_cursor?: string | null;
}

function csrfToken(): string | undefined {
  for (const part of document.cookie.split(";")) {
    const [name, ...value] = part.trim().split("=");
    if (name === "rt_csrf") return decodeURIComponent(value.join("="));
  }
  return undefined;
}

async function errorOf(res: Response): Promise<ApiError> {
  try {
    const body = (await res.json()) as { error?: { code?: string; message?: string } };
    if (body.error?.message) return new ApiError(res.status, body.error.code ?? "error", body.error.message);
  } catch {
    // not JSON: fall through to the status line
  }
  return new ApiError(res.status, "http_error", `The server answered ${res.status} ${res.statusText}`.trim());
}

/** Calls the API and returns the whole envelope (`data`, and `next_cursor` on lists). */
export async function call<T>(method: string, path: string, body?: unknown, extra: Record<string, string> = {}): Promise<Envelope<T>> {
  const headers: Record<string, string> = { accept: "application/json", ...extra };
  if (method !== "GET") {
    const csrf = csrfToken();
    if (csrf) headers["x-csrf-token"] = csrf;
  }
  if (body !== undefined) headers["content-type"] = "application/json";
  let res: Response;
  try {
    res = await fetch(path, { method, headers, credentials: "same-origin", body: body === undefined ? undefined : JSON.stringify(body) });
  } catch {
    throw new ApiError(0, "network", "Could not reach the server. Check your connection and try again.");
  }
  if (!res.ok) throw await errorOf(res);
  return (await res.json()) as Envelope<T>;
}

export const api = {
  get: async <T>(path: string) => (await call<T>("GET", path)).data,
  post: async <T>(path: string, body: unknown = {}) => (await call<T>("POST", path, body)).data,
  patch: async <T>(path: string, body: unknown) => (await call<T>("PATCH", path, body)).data,
  put: async <T>(path: string, body: unknown) => (await call<T>("PUT", path, body)).data,
  del: async <T>(path: string) => (await call<T>("DELETE", path)).data,
};

/** A query string from the set values only. */
export function query(params: Record<string, string | number | boolean | undefined | null>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== "") q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : "";
}
