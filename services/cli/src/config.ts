import { kafkaTopicEnvironment } from "@router/bus";
import { loadConfig, z } from "@router/config";

/** Settings the CLI shares with the services it acts for. */
export const cliConfigSchema = z.object({
  DATABASE_URL: z.string().optional(),
  ROUTER_DATA_DIR: z.string().default("./.data"),
  ROUTER_BUS: z.enum(["memory", "redis", "kafka"]).default("memory"),
  ROUTER_BUS_NAMESPACE: z.string().regex(/^[a-zA-Z0-9_-]+$/).optional(),
  REDIS_URL: z.string().optional(),
  KAFKA_BROKERS: z.string().optional(),
  LOG_LEVEL: z.string().default("warn"),
  ...kafkaTopicEnvironment,
});

export type CliConfig = z.infer<typeof cliConfigSchema>;

export const loadCliConfig = (env: NodeJS.ProcessEnv): CliConfig => loadConfig(cliConfigSchema, env);
