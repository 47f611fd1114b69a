// Validates Kubernetes objects (a JSON array on stdin) against the API schemas that the
// kubernetes-models packages ship (OpenAPI of the Kubernetes API and of prometheus-operator's CRDs).
// An ES module run as its own process: the packages are ESM-only and the tests run as CommonJS.
// Prints a JSON array of {kind, name, error}; unknown kinds are errors too.
import { readFileSync } from "node:fs";

const objects = JSON.parse(readFileSync(0, "utf8"));
const errors = [];
for (const o of objects) {
  const [group, version] = o.apiVersion.includes("/") ? o.apiVersion.split("/") : [null, o.apiVersion];
  const pkg = group === "monitoring.coreos.com" ? "@kubernetes-models/prometheus-operator" : "kubernetes-models";
  const path = group ? `${pkg}/${group}/${version}/${o.kind}` : `${pkg}/${version}/${o.kind}`;
  try {
    const mod = await import(path);
    const Model = mod[o.kind];
    if (typeof Model !== "function") throw new Error(`no model for ${o.apiVersion} ${o.kind}`);
    new Model(o).validate();
  } catch (e) {
    errors.push({ kind: o.kind, name: o.metadata?.name, error: e instanceof Error ? e.message : String(e) });
  }
}
process.stdout.write(JSON.stringify(errors));
