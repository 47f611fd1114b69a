import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startHttpsReceiver, type HttpsReceiver } from "@router/testkit";
import { inCluster, SecretWriter } from "../src/kubernetes-secret";

/**
 * The Secret writer of the bootstrap Job, against an HTTPS server that answers as the Kubernetes
 * API does (no cluster runs on the development machines): the service account files it reads, the
 * calls it makes, and the API's refusals it reports without the data.
 */
describe("writing the operator's key into a Kubernetes Secret", () => {
  let api: HttpsReceiver;
  let dir: string;
  let writer: SecretWriter;
  beforeAll(async () => {
    api = await startHttpsReceiver();
    dir = await mkdtemp(join(tmpdir(), "router-sa-"));
    await writeFile(join(dir, "token"), "sa-token\n");
    await writeFile(join(dir, "ca.crt"), api.ca);
    await writeFile(join(dir, "namespace"), "router\n");
    writer = new SecretWriter(await inCluster({ KUBERNETES_SERVICE_HOST: "127.0.0.1", KUBERNETES_SERVICE_PORT: String(api.port) }, dir));
  });
  afterAll(async () => {
    await api.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("checks for the Secret with the pod's token, trusting the cluster's CA", async () => {
    api.respondWith(() => ({ status: 404, body: JSON.stringify({ kind: "Status", message: 'secrets "k" not found' }) }));
    await expect(writer.exists("router-operator-key")).resolves.toBe(false);
    api.respondWith(() => ({ status: 200, body: "{}" }));
    await expect(writer.exists("router-operator-key")).resolves.toBe(true);
    const last = api.requests.at(-1)!;
    expect(last).toMatchObject({ method: "GET", path: "/api/v1/namespaces/router/secrets/router-operator-key" });
    expect(last.headers.authorization).toBe("Bearer sa-token");
  });

  it("creates an Opaque Secret with the given entries", async () => {
    api.respondWith(() => ({ status: 201, body: "{}" }));
    await writer.create("router-operator-key", { org_id: "org_1", management_key: "rt-mgmt-secret" });
    const last = api.requests.at(-1)!;
    expect(last).toMatchObject({ method: "POST", path: "/api/v1/namespaces/router/secrets" });
    expect(JSON.parse(last.body)).toEqual({
      apiVersion: "v1",
      kind: "Secret",
      type: "Opaque",
      metadata: { name: "router-operator-key", labels: { "app.kubernetes.io/part-of": "router" } },
      stringData: { org_id: "org_1", management_key: "rt-mgmt-secret" },
    });
  });

  it("reports the API's refusal (RBAC) with its message, never the key", async () => {
    api.respondWith(() => ({
      status: 403,
      body: JSON.stringify({ kind: "Status", message: 'secrets is forbidden: User "system:serviceaccount:router:default" cannot create resource "secrets"' }),
    }));
    const failed = writer.create("router-operator-key", { management_key: "rt-mgmt-secret" });
    await expect(failed).rejects.toThrow(/creating Secret router-operator-key: the Kubernetes API answered 403 \(secrets is forbidden/);
    await expect(failed).rejects.not.toThrow(/rt-mgmt-secret/);
  });

  it("says how to run it when the pod has no cluster or no token", async () => {
    await expect(inCluster({}, dir)).rejects.toThrow(/KUBERNETES_SERVICE_HOST.*--key-file/);
    await expect(inCluster({ KUBERNETES_SERVICE_HOST: "127.0.0.1" }, join(dir, "missing"))).rejects.toThrow(/serviceAccountName router-bootstrap/);
  });
});
