import { z } from "zod";
import { dataOf, pageOf, route, timestamp, usd } from "./route";

export const RUNAWAY_ACTIONS = ["alert", "pause"] as const;

export const runawaySettingsBody = z.strictObject({
  runaway_action: z.enum(RUNAWAY_ACTIONS, { error: "is required: alert or pause" }),
});
export const runawaySettings = z.object({ runaway_action: z.enum(RUNAWAY_ACTIONS) });

/** A runaway flag as the runaway service lists it. */
export const runawayFlag = z.object({
  id: z.string(),
  subject_kind: z.enum(["key", "agent"]),
  subject: z.string(),
  key_name: z.string().nullable(),
  key_hash: z.string().nullable(),
  action: z.enum(["alert", "paused"]),
  kind: z.enum(["spend", "rate"]),
  window_start: timestamp,
  window_end: timestamp,
  spend: usd,
  usual_spend: usd,
  requests: z.number().int(),
  usual_requests: z.number(),
  created_at: timestamp,
});
/** The flag as the gateway answers it: whether the flagged key is paused right now is the gateway's. */
export const shownRunawayFlag = runawayFlag.extend({ key_paused: z.boolean() });

const m = { owner: "runaway" as const, access: "management" as const };

export const RUNAWAY_ROUTES = [
  route({ ...m, permission: "read", method: "get", path: "/v1/alerts/settings", summary: "What a runaway flag does", answer: dataOf(runawaySettings) }),
  route({ ...m, permission: "config:write", method: "put", path: "/v1/alerts/settings", summary: "Choose what a runaway flag does", body: runawaySettingsBody, answer: dataOf(runawaySettings) }),
  route({
    ...m,
    permission: "read",
    method: "get",
    path: "/v1/alerts/runaway",
    summary: "Runaway-spend flags of the last 30 days",
    answer: pageOf(shownRunawayFlag),
    // The gateway reads the flags from runaway and adds `key_paused` from its keys.
    serving: "composed",
  }),
];
