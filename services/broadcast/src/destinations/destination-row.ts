import type { DestinationRow } from "./destination-store";

const iso = (d: Date | null): string | null => (d === null ? null : d.toISOString());

/** The Broadcast destination resource of the product's API (the service README); secrets never appear, a header only by its hint. */
export function renderDestination(d: DestinationRow) {
  return {
    id: d.id,
    kind: d.kind,
    url: d.url,
    name: d.name,
    sample_rate: d.sample_rate,
    disabled: d.disabled,
    header_name: d.header_name,
    header_hint: d.header_name === null ? null : d.header_hint,
    last_attempt_at: iso(d.last_attempt_at),
    last_success_at: iso(d.last_success_at),
    last_http_status: d.last_http_status,
    last_error: d.last_error,
    created_at: d.created_at.toISOString(),
  };
}
