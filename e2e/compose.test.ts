import { readdirSync, readFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";

interface ComposeService {
  command?: string[];
  depends_on?: Record<string, unknown>;
  environment?: Record<string, string>;
}

const root = join(__dirname, "..");
const compose = parse(readFileSync(join(root, "docker-compose.yml"), "utf8"), { merge: true }) as {
  services: Record<string, ComposeService>;
};

// Every folder under services/ that is a deployable service (has its own main), apart from the
// one-process runner and the operator CLI, must run in compose.
const deployable = readdirSync(join(root, "services")).filter(
  (s) => !["embedded", "cli"].includes(s) && existsSync(join(root, "services", s, "src", "main.ts")),
);

describe("docker-compose.yml", () => {
  it("runs every deployable service from its own entry point", () => {
    expect(deployable.length).toBeGreaterThanOrEqual(4);
    for (const name of deployable) {
      expect(compose.services[name]?.command).toEqual(["node", `services/${name}/dist/main.js`]);
    }
  });

  it("runs Kafka in KRaft mode, Postgres and Redis", () => {
    expect(compose.services.kafka?.environment?.KAFKA_PROCESS_ROLES).toBe("broker,controller");
    expect(compose.services.postgres).toBeDefined();
    expect(compose.services.redis).toBeDefined();
  });

  it("makes every service wait for its stores and the broker, and points it at Kafka", () => {
    for (const name of deployable) {
      const svc = compose.services[name];
      expect(Object.keys(svc?.depends_on ?? {})).toEqual(expect.arrayContaining(["postgres", "redis", "kafka"]));
      expect(svc?.environment?.ROUTER_BUS).toBe("kafka");
      expect(svc?.environment?.KAFKA_BROKERS).toBe("kafka:9092");
    }
  });

  it("starts the gateway after the services it calls and gives it their addresses", () => {
    const gw = compose.services.gateway;
    expect(Object.keys(gw?.depends_on ?? {})).toEqual(expect.arrayContaining(["routing", "ledger", "activity"]));
    expect(gw?.environment?.ROUTING_GRPC_ADDR).toBe("routing:50051");
    expect(gw?.environment?.LEDGER_GRPC_ADDR).toBe("ledger:50052");
    expect(gw?.environment?.ACTIVITY_HTTP_URL).toBe("http://activity:8083");
  });
});
