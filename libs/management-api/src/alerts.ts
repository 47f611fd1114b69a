import { z } from "zod";
import { dataOf, deletedOf, pageOf, route, timestamp } from "./route";

export const CHANNEL_KINDS = ["webhook", "chat", "email"] as const;

/** `POST /v1/alerts/channels`; the alerts service then checks the target for the kind. */
export const addChannelBody = z.strictObject({
  kind: z.enum(CHANNEL_KINDS, { error: "must be webhook, chat or email" }),
  target: z.string({ error: "is required (a string)" }).trim().min(1, "is required"),
  name: z.string({ error: "must be a string or null" }).trim().min(1, "must not be empty").max(100, "must be at most 100 characters").nullable().optional(),
  thresholds: z
    .array(z.number({ error: "must be whole percentages" }).int("must be whole percentages").min(1, "must be 1 to 100").max(100, "must be 1 to 100"), {
      error: "must be an array of whole percentages",
    })
    .min(1, "must list at least one threshold")
    .max(100, "must list at most 100 thresholds")
    .optional(),
});

/** A channel; the signing secret only in the answer that created a webhook channel. */
export const alertChannel = z.object({
  id: z.string(),
  kind: z.enum(CHANNEL_KINDS),
  target: z.string(),
  name: z.string().nullable(),
  thresholds: z.array(z.number().int()),
  disabled: z.boolean(),
  created_at: timestamp,
  signing_secret: z.string().optional(),
});

export const DELIVERY_STATUSES = ["sent", "failed", "skipped"] as const;

export const alertDelivery = z.object({
  id: z.string(),
  channel_id: z.string().nullable(),
  channel_name: z.string().nullable(),
  channel_kind: z.string(),
  event: z.string(),
  threshold: z.number().nullable(),
  status: z.enum(DELIVERY_STATUSES),
  http_status: z.number().int().nullable(),
  error: z.string().nullable(),
  key_name: z.string().nullable(),
  key_hash_prefix: z.string().nullable(),
  agent_tag: z.string().nullable(),
  attempts: z.number().int(),
  created_at: timestamp,
});

const m = { owner: "alerts" as const, access: "management" as const };

export const ALERTS_ROUTES = [
  route({
    ...m,
    permission: "read",
    method: "get",
    path: "/v1/alerts/channels",
    summary: "Usage-alert channels",
    answer: pageOf(alertChannel).extend({ email_available: z.boolean() }),
  }),
  route({ ...m, permission: "config:write", method: "post", path: "/v1/alerts/channels", summary: "Add a usage-alert channel", body: addChannelBody, answer: dataOf(alertChannel), status: 201, refused: [409] }),
  route({ ...m, permission: "config:write", method: "delete", path: "/v1/alerts/channels/:id", summary: "Remove a usage-alert channel", answer: dataOf(deletedOf("id")) }),
  route({
    ...m,
    permission: "config:write",
    method: "post",
    path: "/v1/alerts/channels/:id/test",
    summary: "Send a test alert",
    answer: dataOf(z.object({ status: z.enum(DELIVERY_STATUSES), http_status: z.number().int().nullable(), error: z.string().nullable() })),
  }),
  route({ ...m, permission: "read", method: "get", path: "/v1/alerts/deliveries", summary: "Recent alert deliveries", answer: pageOf(alertDelivery) }),
];
