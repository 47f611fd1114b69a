import { z } from "zod";
import { checkLogo } from "./brand-logo";

// Control characters (C0, DEL, C1); the footer may break lines (\n), nothing else may.
const CONTROL = /\p{Cc}/u;
const CONTROL_BUT_LINE_FEED = /(?!\n)\p{Cc}/u;

/** Absent, null or blank all clear a field (product rule: "an absent or empty one clears it"). */
const clearable = z
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

/** `PUT /v1/reports/branding`: every field optional; unknown fields are refused by name. */
export const brandingBody = z.strictObject({
  brand_name: brandText(80, CONTROL, "must not contain control characters or line breaks"),
  brand_footer: brandText(200, CONTROL_BUT_LINE_FEED, "must not contain control characters other than line breaks (\\n)"),
  brand_logo: clearable.transform((v, ctx) => {
    if (v === null) return null;
    const checked = checkLogo(v);
    if (checked.ok) return checked.dataUri;
    ctx.addIssue({ code: "custom", message: checked.reason });
    return z.NEVER;
  }),
});
