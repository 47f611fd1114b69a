import { z } from "zod";
import { dataOf, route, timestamp, usd, nanodollars } from "./route";

// Control characters (C0, DEL, C1); the footer may break lines (\n), nothing else may.
const CONTROL = /\p{Cc}/u;
const CONTROL_BUT_LINE_FEED = /(?!\n)\p{Cc}/u;

/** Absent, null or blank all clear a field ("an absent or empty one clears it"). */
export const clearable = z
  .string({ error: "must be a string or null" })
  .nullable()
  .optional()
  .transform((v) => {
    const trimmed = v?.trim() ?? "";
    return trimmed === "" ? null : trimmed;
  });

/** A text field of at most `max` characters (code points, so an emoji counts once). */
function brandText(max: number, control: RegExp, controlMessage: string) {
  return clearable
    .refine((v) => v === null || [...v].length <= max, `must be at most ${max} characters`)
    .refine((v) => v === null || !control.test(v), controlMessage);
}

/**
 * `PUT /v1/reports/branding`: every field optional; unknown fields are refused by name. The
 * reports service extends `brand_logo` with its check of the image (a base64 data: URI).
 */
export const brandingBody = z.strictObject({
  brand_name: brandText(80, CONTROL, "must not contain control characters or line breaks"),
  brand_footer: brandText(200, CONTROL_BUT_LINE_FEED, "must not contain control characters other than line breaks (\\n)"),
  brand_logo: clearable.meta({ description: "an image as a data: URI (base64), checked by the reports service" }),
});

export const branding = z.object({
  /** The organisation's current name, which only the gateway holds. */
  org_name: z.string().nullable(),
  brand_name: z.string().nullable(),
  brand_logo: z.string().nullable(),
  brand_footer: z.string().nullable(),
});

export const reportQuery = z.object({ month: z.string().regex(/^\d{4}-\d{2}$/).optional().meta({ description: "YYYY-MM (UTC); the current month when absent" }) });

export const reportLine = z.object({
  requests: z.number().int(),
  prompt_tokens: z.number().int(),
  completion_tokens: z.number().int(),
  cached_tokens: z.number().int(),
  reasoning_tokens: z.number().int(),
  total_tokens: z.number().int(),
  spend: usd,
  spend_nanodollars: nanodollars,
});

export const clientReport = z.object({
  workspace: z.object({ id: z.string(), name: z.string(), name_in_month: z.string().nullable() }),
  month: z.string(),
  period: z.object({ start: timestamp, end: timestamp, ended: z.boolean() }),
  branding,
  currency: z.literal("USD"),
  totals: reportLine.extend({
    requests_by_status: z.object({ complete: z.number().int(), error: z.number().int(), refused: z.number().int(), cancelled: z.number().int() }),
  }),
  by_model: z.array(reportLine.extend({ model: z.string().nullable() })),
  by_agent: z.array(reportLine.extend({ agent: z.string().nullable() })),
  by_day: z.array(reportLine.extend({ date: z.string() })),
  generated_at: timestamp,
});

const m = { owner: "reports" as const, access: "management" as const };

export const REPORTS_ROUTES = [
  route({ ...m, permission: "read", method: "get", path: "/v1/reports/branding", summary: "Report branding", answer: dataOf(branding) }),
  route({ ...m, permission: "config:write", method: "put", path: "/v1/reports/branding", summary: "Change the report branding", body: brandingBody, answer: dataOf(branding) }),
  route({
    ...m,
    permission: "usage:read",
    method: "get",
    path: "/v1/reports/workspaces/:id",
    summary: "A workspace's client report for a month",
    query: reportQuery,
    answer: dataOf(clientReport),
  }),
];
