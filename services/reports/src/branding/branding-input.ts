import { reports } from "@router/management-api";
import { z } from "zod";
import { checkLogo } from "./brand-logo";

/**
 * `PUT /v1/reports/branding`: the API description's body (@router/management-api), whose logo is
 * here checked as an image and stored as its canonical data URI.
 */
export const brandingBody = reports.brandingBody.extend({
  brand_logo: reports.clearable.transform((v, ctx) => {
    if (v === null) return null;
    const checked = checkLogo(v);
    if (checked.ok) return checked.dataUri;
    ctx.addIssue({ code: "custom", message: checked.reason });
    return z.NEVER;
  }),
});
