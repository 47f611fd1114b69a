import { readdirSync, readFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { parse, parseAllDocuments } from "yaml";
import { parseIdentityPublicKeys, parseIdentitySigningKey } from "@router/config";
import { GATEWAY_NODE_ARGS } from "@router/testkit";

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

/** The command a service runs with: node flags only where the service needs them (the gateway's heap). */
const expectedCommand = (name: string): string[] => ["node", ...(name === "gateway" ? GATEWAY_NODE_ARGS : []), `services/${name}/dist/main.js`];

interface K8sObject {
  kind?: string;
  spec?: { template?: { spec?: { containers?: Array<{ command?: string[] }> } } };
}

/** The container command of the service's Deployment in deploy/k8s/base/<name>.yaml. */
function k8sCommand(name: string): string[] | undefined {
  const objects = parseAllDocuments(readFileSync(join(root, "deploy", "k8s", "base", `${name}.yaml`), "utf8")).map((d) => d.toJS() as K8sObject);
  return objects.find((o) => o.kind === "Deployment")?.spec?.template?.spec?.containers?.[0]?.command;
}

describe("docker-compose.yml", () => {
  it("runs every deployable service from its own entry point", () => {
    expect(deployable.length).toBeGreaterThanOrEqual(4);
    for (const name of deployable) {
      expect(compose.services[name]?.command).toEqual(expectedCommand(name));
    }
  });

  it("runs each service with the same command as its Kubernetes Deployment and the test stack", () => {
    for (const name of deployable) expect(k8sCommand(name)).toEqual(expectedCommand(name));
  });

  it("gives the edge's signing key to the gateway alone, its public half to every service, and the CSRF key to the console beside it", () => {
    const signing = parseIdentitySigningKey(compose.services.gateway?.environment?.ROUTER_IDENTITY_SIGNING_KEY ?? "");
    const gatewayCsrfKey = compose.services.gateway?.environment?.ROUTER_INTERNAL_SECRET;
    expect(gatewayCsrfKey).toBeDefined();
    for (const name of deployable.filter((n) => n !== "gateway")) {
      const env = compose.services[name]?.environment ?? {};
      // The console issues the sessions whose CSRF tokens the gateway checks: the same key.
      const csrfKey = name === "console" ? gatewayCsrfKey : undefined;
      expect({ name, signingKey: env.ROUTER_IDENTITY_SIGNING_KEY, csrfKey: env.ROUTER_INTERNAL_SECRET }).toEqual({ name, signingKey: undefined, csrfKey });
      expect(parseIdentityPublicKeys(env.ROUTER_IDENTITY_PUBLIC_KEYS ?? "").keys).toEqual([{ kty: "OKP", crv: "Ed25519", x: signing.x, kid: signing.kid }]);
    }
  });

  it("runs Kafka in KRaft mode, Postgres and Redis", () => {
    expect(compose.services.kafka?.environment?.KAFKA_PROCESS_ROLES).toBe("broker,controller");
    expect(compose.services.postgres).toBeDefined();
    expect(compose.services.redis).toBeDefined();
  });

  it("declares the Kafka topics in a one-shot step, on a broker that creates none by itself", () => {
    expect(compose.services["kafka-topics"]?.command).toEqual(["node", "services/cli/dist/main.js", "kafka", "topics", "create"]);
    expect(compose.services.kafka?.environment?.KAFKA_AUTO_CREATE_TOPICS_ENABLE).toBe("false");
  });

  it("makes every service wait for its stores, the broker and the declared topics, and points it at Kafka", () => {
    for (const name of deployable) {
      const svc = compose.services[name];
      expect(Object.keys(svc?.depends_on ?? {})).toEqual(expect.arrayContaining(["postgres", "redis", "kafka", "kafka-topics"]));
      expect(svc?.depends_on?.["kafka-topics"]).toEqual({ condition: "service_completed_successfully" });
      expect(svc?.environment?.ROUTER_BUS).toBe("kafka");
      expect(svc?.environment?.KAFKA_BROKERS).toBe("kafka:9092");
    }
  });

  it("starts the gateway after the services it calls and gives it their addresses", () => {
    const gw = compose.services.gateway;
    expect(Object.keys(gw?.depends_on ?? {})).toEqual(expect.arrayContaining(["routing", "ledger", "activity", "reports"]));
    expect(gw?.environment?.ROUTING_GRPC_ADDR).toBe("routing:50051");
    expect(gw?.environment?.LEDGER_GRPC_ADDR).toBe("ledger:50052");
    expect(gw?.environment?.LEDGER_HTTP_URL).toBe("http://ledger:8085");
    expect(gw?.environment?.ACTIVITY_HTTP_URL).toBe("http://activity:8083");
    expect(gw?.environment?.REPORTS_HTTP_URL).toBe("http://reports:8089");
    expect(Object.keys(gw?.depends_on ?? {})).toContain("broadcast");
    expect(gw?.environment?.BROADCAST_HTTP_URL).toBe("http://broadcast:8086");
  });
});
