import { z } from "zod";
import { ConfigError } from "./config-error";

export { ConfigError };

/**
 * Parses environment variables against a zod object schema once, at process start.
 * Empty strings count as unset so `FOO=` in a compose file falls back to the default.
 */
export function loadConfig<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv = process.env): z.infer<S> {
  const cleaned: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && v !== "") cleaned[k] = v;
  const parsed = schema.safeParse(cleaned);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`));
  }
  return parsed.data;
}

/** Reusable field types for config schemas. */
export const env = {
  port: (def: number) => z.coerce.number().int().min(0).max(65535).default(def),
  bool: (def: boolean) =>
    z
      .enum(["true", "false", "1", "0", "yes", "no"])
      .default(def ? "true" : "false")
      .transform((v) => v === "true" || v === "1" || v === "yes"),
  int: (def: number) => z.coerce.number().int().default(def),
  url: () => z.string().url(),
  list: () =>
    z
      .string()
      .transform((s) => s.split(",").map((x) => x.trim()).filter(Boolean)),
};

export { z };
export * from "./secrets";
export * from "./provider-base-urls";
export * from "./identity-keys";
export * from "./renamed-settings";
