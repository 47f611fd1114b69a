import type { Permission } from "@router/access";
import { z } from "zod";

/** The services that own management routes; the gateway forwards to them by this name. */
export const OWNERS = ["activity", "routing", "ledger", "reports", "alerts", "broadcast", "runaway", "console"] as const;
export type Owner = (typeof OWNERS)[number];

export type Method = "get" | "post" | "put" | "patch" | "delete";

/**
 * Who may call: `public` (no credential), `inference` (an inference key), `management` (a
 * management key or a dashboard session), `any` (either), `processor` (the payment processor,
 * which signs its events), `probe` (an uptime probe, with the token the owner checks).
 */
export type Access = "public" | "inference" | "management" | "any" | "processor" | "probe";

/**
 * How the gateway serves the route: forwarded as it is, composed (the gateway adds its own fields),
 * or served by the gateway itself (owner `gateway`, never forwarded).
 */
export type Serving = "forwarded" | "composed" | "served";

/** The owner of the management routes the gateway still serves itself: moving one is a change of owner. */
export const GATEWAY = "gateway";

interface RouteFields {
  /** `GET /v1/presets/:slug`: unique, and the key the gateway's per-route options use. */
  key: string;
  method: Method;
  /** The express form: `/v1/presets/:slug`. */
  path: string;
  /** The OpenAPI form: `/v1/presets/{slug}`. */
  openApiPath: string;
  access: Access;
  /** What the owner checks against the role table (@router/access); null where no role is read. */
  permission: Permission | null;
  summary: string;
  /** Query parameters (all strings at the edge), as the owner parses them. */
  query?: z.ZodType;
  /** The JSON body, as the owner validates it. */
  body?: z.ZodType;
  /** The body of a success: `{"data": ...}` (a list page adds `next_cursor`), or CSV text. */
  answer: z.ZodType | "csv";
  /** The success status (200 unless given). */
  status?: number;
  /** Refusals besides the usual ones of its access. */
  refused?: Array<401 | 402 | 409>;
  /** Request headers the owner reads, passed on by the gateway (every other one is dropped). */
  passHeaders?: readonly string[];
  /** The owner reads the raw body itself (a signature over the bytes, a refusal before reading). */
  bodyUnread?: boolean;
  /** Only a dashboard session may call (a management key gets 403). */
  sessionOnly?: boolean;
}

/** A route another service owns (forwarded or composed), or one the gateway serves itself. */
type Ownership = { owner: Owner; serving: "forwarded" | "composed" } | { owner: typeof GATEWAY; serving: "served" };

export type ManagementRoute = RouteFields & Ownership;

export type RouteInput = Omit<RouteFields, "key" | "openApiPath"> &
  ({ owner: Owner; serving?: "forwarded" | "composed" } | { owner: typeof GATEWAY; serving: "served" });

/** `/v1/presets/:slug` → `/v1/presets/{slug}`. */
export const openApiPathOf = (path: string): string => path.replace(/:(\w+)/g, "{$1}");

export function route(input: RouteInput): ManagementRoute {
  const fields = { key: `${input.method.toUpperCase()} ${input.path}`, openApiPath: openApiPathOf(input.path) };
  return input.owner === GATEWAY ? { ...input, ...fields } : { ...input, ...fields, serving: input.serving ?? "forwarded" };
}

/** `{"data": T}`, the body of every `/v1` JSON answer. */
export const dataOf = <T extends z.ZodType>(schema: T) => z.object({ data: schema });

/** `{"data": [T], "next_cursor": string | null}`: a page of a list (null on the last, and on unpaged lists). */
export const pageOf = <T extends z.ZodType>(schema: T) => z.object({ data: z.array(schema), next_cursor: z.string().nullable() });

/** `{"id", "deleted": true}`: what a delete answers. */
export const deletedOf = <K extends string>(idField: K) =>
  z.object({ [idField]: z.string(), deleted: z.literal(true) } as Record<K, z.ZodString> & { deleted: z.ZodLiteral<true> });

/** Every timestamp of the API. */
export const timestamp = z.string().meta({ description: "ISO 8601 UTC with milliseconds" });

/** USD as a JSON number (money is kept in integer nanodollars and converted at the edge). */
export const usd = z.number().meta({ description: "USD" });

/** An amount in integer nanodollars as a decimal string (exact, beyond a double's range). */
export const nanodollars = z.string().regex(/^-?\d+$/).meta({ description: "integer nanodollars as a decimal string" });

/** The marker that says a field is free-form on purpose (any JSON object the caller chose). */
export const FREE_FORM = "x-free-form";

/**
 * A field whose content is the caller's own (a model policy, a model's default parameters): any
 * JSON object. Marked, so the check for loose schemas in the API description lets it through.
 */
export const freeForm = (description: string) =>
  z.record(z.string(), z.unknown()).meta({ description, [FREE_FORM]: true });

/** A whole number given as query text within [min, max]. */
export function intParam(min: number, max: number) {
  return z
    .string()
    .regex(/^\d{1,9}$/, "must be a whole number")
    .transform(Number)
    .pipe(z.number().int().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`));
}
