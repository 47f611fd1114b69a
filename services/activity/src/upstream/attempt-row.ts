import { isoOf } from "../requests/request-row";

export interface AttemptRow {
  id: string;
  request_id: string;
  org_id: string;
  attempt: number;
  created_at: Date | string;
  model_id: string | null;
  provider_slug: string | null;
  endpoint_id: string | null;
  is_byok: boolean;
  status: "ok" | "error";
  http_status: number | null;
  error_code: string | null;
  error_message: string | null;
  duration_ms: number | null;
  ttft_ms: number | null;
}

/** The upstream attempt of the product's API (the service README). */
export function renderAttempt(a: AttemptRow) {
  return {
    id: a.id,
    request_id: a.request_id,
    created_at: isoOf(a.created_at),
    attempt: a.attempt,
    model_id: a.model_id,
    provider_slug: a.provider_slug,
    endpoint_id: a.endpoint_id,
    is_byok: a.is_byok,
    status: a.status,
    http_status: a.http_status,
    error_code: a.error_code,
    error_message: a.error_message,
    duration_ms: a.duration_ms,
    ttft_ms: a.ttft_ms,
  };
}
