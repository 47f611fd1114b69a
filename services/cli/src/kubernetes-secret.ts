import { readFile } from "node:fs/promises";
import { request } from "node:https";
import { join } from "node:path";

/** Where Kubernetes mounts a pod's service account token, CA and namespace. */
export const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

/** The API server as a pod sees it, with the pod's own service account. */
export interface InCluster {
  host: string;
  port: number;
  token: string;
  ca: string;
  namespace: string;
}

export async function inCluster(env: NodeJS.ProcessEnv, dir = SERVICE_ACCOUNT_DIR): Promise<InCluster> {
  const host = env.KUBERNETES_SERVICE_HOST;
  if (!host) throw new Error("--key-secret works inside a Kubernetes pod (KUBERNETES_SERVICE_HOST is unset): use --key-file elsewhere");
  const read = (name: string) =>
    readFile(join(dir, name), "utf8").catch(() => {
      throw new Error(`no service account ${name} in ${dir}: run the pod with serviceAccountName router-bootstrap and its token mounted`);
    });
  const [token, ca, namespace] = await Promise.all([read("token"), read("ca.crt"), read("namespace")]);
  return { host, port: Number(env.KUBERNETES_SERVICE_PORT ?? "443"), token: token.trim(), ca, namespace: namespace.trim() };
}

/**
 * Creates one Secret through the Kubernetes API with the pod's service account (needs `get` and
 * `create` on secrets in its namespace). A dependency-free client for two calls, instead of the
 * official client's whole API surface. Errors carry the API's status and message, never the data.
 */
export class SecretWriter {
  constructor(private readonly cluster: InCluster) {}

  get namespace(): string {
    return this.cluster.namespace;
  }

  async exists(name: string): Promise<boolean> {
    const res = await this.call("GET", `${this.secretsPath()}/${encodeURIComponent(name)}`);
    if (res.status === 200) return true;
    if (res.status === 404) return false;
    throw apiError(`reading Secret ${name}`, res);
  }

  async create(name: string, data: Record<string, string>): Promise<void> {
    const body = {
      apiVersion: "v1",
      kind: "Secret",
      type: "Opaque",
      metadata: { name, labels: { "app.kubernetes.io/part-of": "router" } },
      stringData: data,
    };
    const res = await this.call("POST", this.secretsPath(), JSON.stringify(body));
    if (res.status !== 201) throw apiError(`creating Secret ${name}`, res);
  }

  private secretsPath(): string {
    return `/api/v1/namespaces/${encodeURIComponent(this.cluster.namespace)}/secrets`;
  }

  private call(method: string, path: string, body?: string): Promise<{ status: number; text: string }> {
    const { host, port, token, ca } = this.cluster;
    return new Promise((resolve, reject) => {
      const req = request(
        {
          host,
          port,
          path,
          method,
          ca,
          // One call and done: no kept-alive socket holding the process open.
          agent: false,
          timeout: 10_000,
          headers: {
            authorization: `Bearer ${token}`,
            accept: "application/json",
            ...(body === undefined ? {} : { "content-type": "application/json", "content-length": Buffer.byteLength(body) }),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }));
          res.on("error", reject);
        },
      );
      req.on("timeout", () => req.destroy(new Error(`the Kubernetes API at ${host}:${port} did not answer within 10 s`)));
      req.on("error", reject);
      req.end(body);
    });
  }
}

/** The API's own `Status` message (e.g. RBAC's "secrets is forbidden: ..."). */
function apiError(what: string, res: { status: number; text: string }): Error {
  let message = "";
  try {
    const parsed = (JSON.parse(res.text) as { message?: unknown }).message;
    message = typeof parsed === "string" ? parsed : "";
  } catch {
    message = "";
  }
  return new Error(`${what}: the Kubernetes API answered ${res.status}${message ? ` (${message})` : ""}`);
}
