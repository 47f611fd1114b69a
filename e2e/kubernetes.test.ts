import { execFileSync, spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { renderKustomization, type K8sObject } from "./kubernetes/render";

const root = join(__dirname, "..");
const k8s = join(root, "deploy", "k8s");
const overlays = readdirSync(join(k8s, "overlays"));
const version = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string }).version;

/** Services that get a Deployment, an autoscaler, a disruption budget and a ServiceMonitor. */
const SERVICES = ["gateway", "console", "routing", "ledger", "activity", "reports", "alerts", "broadcast", "runaway"];

interface Container {
  name: string;
  image: string;
  command?: string[];
  env?: Array<{ name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean } } }>;
  envFrom?: Array<{ secretRef?: { name: string }; configMapRef?: { name: string } }>;
  startupProbe?: Record<string, unknown>;
  readinessProbe?: Record<string, unknown>;
  livenessProbe?: Record<string, unknown>;
  securityContext?: Record<string, unknown>;
  volumeMounts?: Array<{ name: string; mountPath: string }>;
}
interface PodSpec {
  containers: Container[];
  volumes?: Array<{ name: string; emptyDir?: unknown }>;
  terminationGracePeriodSeconds?: number;
}
const podSpec = (o: K8sObject): PodSpec => (o.spec as { template: { spec: PodSpec } }).template.spec;
const mainContainer = (o: K8sObject): Container => {
  const c = podSpec(o).containers[0];
  if (!c) throw new Error(`${o.kind} ${o.metadata.name} has no container`);
  return c;
};
const byKind = (objects: K8sObject[], kind: string) => objects.filter((o) => o.kind === kind);
/** Every Secret and ConfigMap a pod's containers read, as `Secret/<name>` or `Secret/<name>:<key>`. */
const sourcesOf = (o: K8sObject): string[] =>
  podSpec(o).containers.flatMap((c) => [
    ...(c.envFrom ?? []).flatMap((f) => [f.secretRef ? `Secret/${f.secretRef.name}` : null, f.configMapRef ? `ConfigMap/${f.configMapRef.name}` : null]),
    ...(c.env ?? []).map((e) => (e.valueFrom?.secretKeyRef ? `Secret/${e.valueFrom.secretKeyRef.name}:${e.valueFrom.secretKeyRef.key}` : null)),
  ]).filter((x): x is string => x !== null);
const find = (objects: K8sObject[], kind: string, name: string) => objects.find((o) => o.kind === kind && o.metadata.name === name);

/** Validates objects against the Kubernetes (and prometheus-operator) schemas in a child ES module. */
function schemaErrors(objects: K8sObject[]): Array<{ kind: string; name: string; error: string }> {
  const out = execFileSync(process.execPath, [join(__dirname, "kubernetes", "validate-objects.mjs")], {
    input: JSON.stringify(objects),
    encoding: "utf8",
  });
  return JSON.parse(out) as Array<{ kind: string; name: string; error: string }>;
}

const kubectl = spawnSync("kubectl", ["version", "--client"], { encoding: "utf8" }).status === 0;

describe.each(overlays)("deploy/k8s/overlays/%s", (overlay) => {
  const objects = renderKustomization(join(k8s, "overlays", overlay));

  it("renders objects that all pass the Kubernetes schemas", () => {
    expect(objects.length).toBeGreaterThan(SERVICES.length * 5);
    expect(schemaErrors(objects)).toEqual([]);
  });

  it("catches a schema violation (the validator is not a no-op)", () => {
    const broken = structuredClone(find(objects, "Deployment", "ledger")!);
    (mainContainer(broken).readinessProbe as { grpc: { port: unknown } }).grpc.port = "fifty";
    expect(schemaErrors([broken])).toEqual([expect.objectContaining({ kind: "Deployment", name: "ledger" })]);
  });

  (kubectl ? it : it.skip)("renders as `kubectl kustomize` does", () => {
    const real = parseAllDocuments(execFileSync("kubectl", ["kustomize", join(k8s, "overlays", overlay)], { encoding: "utf8" })).map((d) => d.toJS() as K8sObject);
    const key = (o: K8sObject) => `${o.kind}/${o.metadata.name}`;
    const sort = (list: K8sObject[]) => [...list].sort((a, b) => key(a).localeCompare(key(b)));
    expect(sort(objects)).toEqual(sort(real));
  });

  it("carries no Secret: router-secrets is created outside the repository", () => {
    expect(byKind(objects, "Secret")).toEqual([]);
    // Every pod but the uptime probe, which connects to nothing but the public URL, and the console,
    // which connects to nothing but its own schema.
    const connectsOnlyToItsOwn = (o: K8sObject) => o.metadata.name.startsWith("probe-") || o.metadata.name === "console";
    for (const d of [...byKind(objects, "Deployment"), ...byKind(objects, "Job")].filter((o) => !connectsOnlyToItsOwn(o))) {
      expect(JSON.stringify(podSpec(d))).toContain('"secretRef":{"name":"router-secrets"}');
    }
  });

  it("connects each service as its own database role; only the migrate Job holds the owner's URL, and services do not migrate", () => {
    const workloads = [...byKind(objects, "Deployment"), ...byKind(objects, "Job")];
    const readers = (source: string) => workloads.filter((o) => sourcesOf(o).includes(source)).map((o) => `${o.kind}/${o.metadata.name}`).sort();
    for (const name of SERVICES) {
      const env = mainContainer(find(objects, "Deployment", name)!).env ?? [];
      expect(env.filter((e) => e.name === "DATABASE_URL")).toEqual([{ name: "DATABASE_URL", valueFrom: { secretKeyRef: { name: "router-database", key: name } } }]);
      // The bootstrap Job writes the console's rows (the operator organisation) as the console's role.
      const expected = name === "console" && overlay === "production" ? ["Deployment/console", "Job/router-bootstrap"] : [`Deployment/${name}`];
      expect(readers(`Secret/router-database:${name}`)).toEqual(expected);
    }
    expect(readers("Secret/router-database:migrate")).toEqual(["Job/router-migrate"]);
    expect(mainContainer(find(objects, "Job", "router-migrate")!).env).toEqual([
      { name: "DATABASE_URL", valueFrom: { secretKeyRef: { name: "router-database", key: "migrate" } } },
    ]);
    // No pod has a database URL written into its manifest, nor reads router-database whole.
    for (const o of workloads) {
      expect(JSON.stringify(podSpec(o))).not.toMatch(/postgres(ql)?:\/\//);
      expect(sourcesOf(o)).not.toContain("Secret/router-database");
    }
    const config = find(objects, "ConfigMap", "router-config") as K8sObject & { data: Record<string, string> };
    expect(config.data.ROUTER_MIGRATE_ON_START).toBe("false");
  });

  it("gives the uptime probe its token and nothing else; the console checks the same token, and the gateway never sees it", () => {
    const probes = byKind(objects, "Deployment").filter((o) => o.metadata.name.startsWith("probe-"));
    expect(probes.length).toBeGreaterThan(0);
    for (const probe of probes) {
      expect(sourcesOf(probe)).toEqual(["Secret/router-probe-token:ROUTER_PROBE_TOKEN"]);
      expect(JSON.stringify(podSpec(probe))).not.toContain("DATABASE_URL");
    }
    const consoleToken = (mainContainer(find(objects, "Deployment", "console")!).env ?? []).find((e) => e.name === "ROUTER_PROBE_TOKEN");
    expect(consoleToken?.valueFrom?.secretKeyRef).toEqual({ name: "router-probe-token", key: "ROUTER_PROBE_TOKEN", optional: true });
    const workloads = [...byKind(objects, "Deployment"), ...byKind(objects, "Job")];
    const readers = workloads.filter((o) => sourcesOf(o).includes("Secret/router-probe-token:ROUTER_PROBE_TOKEN")).map((o) => o.metadata.name);
    expect(readers.filter((n) => !n.startsWith("probe-"))).toEqual(["console"]);
    // The console's pod reads its own role's URL, the probes' token, the master key, the edge's
    // public keys, and of the edge's secrets the key pepper and the CSRF key alone: no signing key,
    // and no other secret (no bus, no Redis: not router-secrets).
    expect(sourcesOf(find(objects, "Deployment", "console")!).sort()).toEqual([
      "ConfigMap/router-config",
      "ConfigMap/router-identity-public-keys",
      "Secret/router-database:console",
      "Secret/router-edge-secrets:ROUTER_INTERNAL_SECRET",
      "Secret/router-edge-secrets:ROUTER_KEY_PEPPER",
      "Secret/router-master-key",
      "Secret/router-probe-token:ROUTER_PROBE_TOKEN",
      "Secret/router-sign-in",
    ]);
    expect(workloads.filter((o) => sourcesOf(o).includes("Secret/router-sign-in")).map((o) => o.metadata.name)).toEqual(["console"]);
  });

  it("gives each pod only the secrets it uses: the edge's signing key to the gateway alone", () => {
    const workloads = [...byKind(objects, "Deployment"), ...byKind(objects, "Job")];
    const readers = (source: string) => workloads.filter((o) => sourcesOf(o).includes(source)).map((o) => `${o.kind}/${o.metadata.name}`).sort();
    expect(readers("Secret/router-edge-secrets")).toEqual(["Deployment/gateway"]);
    expect(readers("Secret/router-master-key")).toEqual(["Deployment/alerts", "Deployment/broadcast", "Deployment/console", "Deployment/gateway"]);
    const verifiers = ["activity", "alerts", "broadcast", "console", "ledger", "reports", "routing", "runaway"];
    expect(readers("ConfigMap/router-identity-public-keys")).toEqual(verifiers.map((n) => `Deployment/${n}`));
    // No variable of any pod names the signing key, apart from the gateway's Secret.
    for (const o of workloads) {
      const named = JSON.stringify(podSpec(o));
      expect({ pod: o.metadata.name, signingKey: named.includes("ROUTER_IDENTITY_SIGNING_KEY") }).toEqual({ pod: o.metadata.name, signingKey: false });
    }
    if (overlay === "production") {
      expect(sourcesOf(find(objects, "Job", "router-bootstrap")!)).toContain("Secret/router-edge-secrets:ROUTER_KEY_PEPPER");
    }
  });

  it("pins every image to the release in package.json", () => {
    for (const o of [...byKind(objects, "Deployment"), ...byKind(objects, "Job")]) {
      for (const c of podSpec(o).containers) expect(c.image).toMatch(new RegExp(`:${version.replace(/\./g, "\\.")}$`));
    }
  });

  it("runs every container as the image's non-root user on a read-only root, writing only to its volumes", () => {
    for (const o of [...byKind(objects, "Deployment"), ...byKind(objects, "Job")]) {
      const spec = podSpec(o);
      for (const c of spec.containers) {
        expect(c.securityContext).toEqual({
          runAsNonRoot: true,
          runAsUser: 1000,
          runAsGroup: 1000,
          readOnlyRootFilesystem: true,
          allowPrivilegeEscalation: false,
          capabilities: { drop: ["ALL"] },
          seccompProfile: { type: "RuntimeDefault" },
        });
        const mounts = (c.volumeMounts ?? []).map((m) => m.mountPath);
        expect(["/tmp", "/var/lib/router"]).toEqual(expect.arrayContaining(mounts));
        for (const v of spec.volumes ?? []) expect(v.emptyDir).toBeDefined();
      }
    }
    const config = find(objects, "ConfigMap", "router-config") as K8sObject & { data: Record<string, string> };
    expect(config.data.ROUTER_DATA_DIR).toBe("/var/lib/router");
  });

  it.each(SERVICES)("gives %s an autoscaler, a disruption budget, a ServiceMonitor and three probes", (name) => {
    const hpa = find(objects, "HorizontalPodAutoscaler", name) as K8sObject & { apiVersion: string; spec: { scaleTargetRef: { name: string }; minReplicas: number } };
    expect(hpa.apiVersion).toBe("autoscaling/v2");
    expect(hpa.spec.scaleTargetRef.name).toBe(name);
    expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(2);
    expect(find(objects, "PodDisruptionBudget", name)).toBeDefined();
    // The Deployment leaves the replica count to the autoscaler (an apply would reset it otherwise).
    const deployment = find(objects, "Deployment", name)!;
    expect((deployment.spec as { replicas?: number }).replicas).toBeUndefined();
    const c = mainContainer(deployment);
    for (const probe of [c.startupProbe, c.readinessProbe, c.livenessProbe]) expect(probe).toBeDefined();
    const monitor = find(objects, "ServiceMonitor", name) as K8sObject & { spec: { selector: { matchLabels: Record<string, string> }; endpoints: Array<{ port: string }> } };
    const scraped = byKind(objects, "Service").filter((s) =>
      Object.entries(monitor.spec.selector.matchLabels).every(([k, v]) => s.metadata.labels?.[k] === v),
    );
    expect(scraped).toHaveLength(1);
    const ports = (scraped[0]!.spec as { ports: Array<{ name: string }> }).ports.map((p) => p.name);
    expect(ports).toContain(monitor.spec.endpoints[0]?.port);
  });

  it("probes gRPC services with grpc.health.v1 and the gateway on /livez and /readyz, draining on stop", () => {
    for (const name of ["routing", "ledger"]) {
      const c = mainContainer(find(objects, "Deployment", name)!);
      expect(c.readinessProbe?.grpc).toBeDefined();
      expect(c.livenessProbe?.grpc).toBeDefined();
    }
    const deployment = find(objects, "Deployment", "gateway")!;
    const gateway = podSpec(deployment);
    const c = mainContainer(deployment);
    expect(c.readinessProbe).toMatchObject({ httpGet: { path: "/readyz" } });
    expect(c.livenessProbe).toMatchObject({ httpGet: { path: "/livez" } });
    const grace = Number(c.env?.find((e) => e.name === "GATEWAY_DRAIN_GRACE_MS")?.value) / 1000;
    // preStop sleep + drain grace + settlement flush must fit in the termination grace period.
    expect(gateway.terminationGracePeriodSeconds).toBeGreaterThan(5 + grace + 5);
  });

  it("balances gRPC across routing and ledger pods: headless Services and dns:/// targets", () => {
    const env = Object.fromEntries((mainContainer(find(objects, "Deployment", "gateway")!).env ?? []).map((e) => [e.name, e.value]));
    expect(env.ROUTING_GRPC_ADDR).toBe("dns:///routing:50051");
    expect(env.LEDGER_GRPC_ADDR).toBe("dns:///ledger:50052");
    for (const name of ["routing", "ledger"]) expect((find(objects, "Service", name)!.spec as { clusterIP?: string }).clusterIP).toBe("None");
  });

  it("declares the Kafka topics in a Job, laid out by the ConfigMap's KAFKA_TOPIC_* settings", () => {
    const job = find(objects, "Job", "router-kafka-topics")!;
    expect(mainContainer(job).command).toEqual(["node", "services/cli/dist/main.js", "kafka", "topics", "create"]);
    const config = find(objects, "ConfigMap", "router-config") as K8sObject & { data: Record<string, string> };
    expect(config.data.ROUTER_BUS).toBe("kafka");
    for (const setting of ["KAFKA_TOPIC_PARTITIONS", "KAFKA_TOPIC_REPLICATION_FACTOR", "KAFKA_TOPIC_MIN_INSYNC_REPLICAS"]) {
      expect(Number(config.data[setting])).toBeGreaterThanOrEqual(1);
    }
    expect(Number(config.data.KAFKA_TOPIC_MIN_INSYNC_REPLICAS)).toBeLessThanOrEqual(Number(config.data.KAFKA_TOPIC_REPLICATION_FACTOR));
  });

  it("bootstraps the operator organisation in a Job that writes the key into a Secret, with rights for that alone", () => {
    const job = find(objects, "Job", "router-bootstrap")!;
    const command = mainContainer(job).command ?? [];
    expect(command.slice(0, 4)).toEqual(["node", "services/cli/dist/main.js", "org", "create"]);
    expect(command).toEqual(expect.arrayContaining(["--operator", "--if-missing", "--key-secret"]));
    const spec = podSpec(job) as PodSpec & { serviceAccountName?: string };
    expect(spec.serviceAccountName).toBe("router-bootstrap");
    const role = find(objects, "Role", "router-bootstrap") as K8sObject & { rules: Array<{ resources: string[]; verbs: string[] }> };
    expect(role.rules.flatMap((r) => r.resources)).toEqual(["secrets", "secrets"]);
    expect(role.rules.flatMap((r) => r.verbs).sort()).toEqual(["create", "get"]);
    const binding = find(objects, "RoleBinding", "router-bootstrap") as K8sObject & { subjects: Array<{ name: string; namespace?: string }> };
    expect(binding.subjects).toEqual([{ kind: "ServiceAccount", name: "router-bootstrap", namespace: job.metadata.namespace }]);
    // Every other pod runs without an API token.
    for (const o of [...byKind(objects, "Deployment"), ...byKind(objects, "Job")].filter((o) => o !== job)) {
      expect((podSpec(o) as PodSpec & { automountServiceAccountToken?: boolean }).automountServiceAccountToken).toBe(false);
    }
  });

  it("runs migrations as a Job and admits outside traffic only to the gateway", () => {
    const job = find(objects, "Job", "router-migrate")!;
    expect(mainContainer(job).command).toEqual(["node", "services/cli/dist/main.js", "migrate"]);
    const policies = byKind(objects, "NetworkPolicy") as Array<K8sObject & { spec: { podSelector: Record<string, unknown>; ingress?: Array<{ from?: unknown[] }> } }>;
    // Ingress without a `from` (anyone) appears only on the gateway's policy.
    const open = policies.filter((p) => (p.spec.ingress ?? []).some((rule) => rule.from === undefined));
    expect(open.map((p) => p.spec.podSelector)).toEqual([{ matchLabels: { "app.kubernetes.io/name": "gateway" } }]);
  });
});
