import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { parse, parseAllDocuments } from "yaml";

/**
 * The part of kustomize that deploy/k8s uses, so CI renders the overlays without a kustomize binary
 * (none ships on npm): `resources` (files and directories), `namespace` (RoleBinding subjects too), `images` and `patches` by
 * path, merged the way a strategic merge patch merges these objects (maps key by key, lists of
 * named items by name). The Kubernetes test compares it with `kubectl kustomize` where kubectl is
 * installed, so it cannot drift from the real renderer unnoticed.
 */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

interface Kustomization {
  resources?: string[];
  namespace?: string;
  images?: Array<{ name: string; newName?: string; newTag?: string }>;
  patches?: Array<{ path: string }>;
}

/** Kinds that live outside namespaces (the only one the manifests carry). */
const CLUSTER_SCOPED = new Set(["Namespace"]);

export function renderKustomization(dir: string): K8sObject[] {
  const k = parse(readFileSync(join(dir, "kustomization.yaml"), "utf8")) as Kustomization;
  let objects: K8sObject[] = [];
  for (const res of k.resources ?? []) {
    const path = join(dir, res);
    if (statSync(path).isDirectory()) objects.push(...renderKustomization(path));
    else objects.push(...readObjects(path));
  }
  for (const p of k.patches ?? []) {
    for (const patch of readObjects(join(dir, p.path))) {
      const i = objects.findIndex((o) => o.kind === patch.kind && o.metadata.name === patch.metadata.name);
      if (i < 0) throw new Error(`patch ${p.path}: no ${patch.kind} ${patch.metadata.name}`);
      objects[i] = mergePatch(objects[i], patch) as K8sObject;
    }
  }
  if (k.namespace) {
    const ns = k.namespace;
    objects = objects.map((o) => (CLUSTER_SCOPED.has(o.kind) ? o : withSubjectsIn({ ...o, metadata: { ...o.metadata, namespace: ns } }, ns)));
  }
  for (const image of k.images ?? []) objects = objects.map((o) => setImage(o, image) as K8sObject);
  return objects;
}

/** kustomize's namespace also moves a RoleBinding's ServiceAccount subjects into that namespace. */
function withSubjectsIn(o: K8sObject, ns: string): K8sObject {
  if (o.kind !== "RoleBinding" || !Array.isArray(o.subjects)) return o;
  const subjects = (o.subjects as Array<{ kind: string }>).map((s) => (s.kind === "ServiceAccount" ? { ...s, namespace: ns } : s));
  return { ...o, subjects };
}

function readObjects(path: string): K8sObject[] {
  if (!existsSync(path)) throw new Error(`missing ${path} (from ${dirname(path)})`);
  return parseAllDocuments(readFileSync(path, "utf8"))
    .map((d) => d.toJS() as K8sObject | null)
    .filter((o): o is K8sObject => o !== null);
}

type Json = unknown;
const isMap = (v: Json): v is Record<string, Json> => typeof v === "object" && v !== null && !Array.isArray(v);
const isNamedList = (v: Json): v is Array<{ name: string }> =>
  Array.isArray(v) && v.length > 0 && v.every((e) => isMap(e) && typeof e.name === "string");

function mergePatch(target: Json, patch: Json): Json {
  if (isMap(target) && isMap(patch)) {
    const out: Record<string, Json> = { ...target };
    for (const [key, value] of Object.entries(patch)) out[key] = key in target ? mergePatch(target[key], value) : value;
    return out;
  }
  if (isNamedList(target) && isNamedList(patch)) {
    const out: Json[] = [...target];
    for (const item of patch) {
      const i = target.findIndex((t) => t.name === item.name);
      if (i < 0) out.push(item);
      else out[i] = mergePatch(target[i], item);
    }
    return out;
  }
  return patch;
}

/** kustomize's `images`: rewrites `image` of every container whose image has that name. */
function setImage(node: Json, image: { name: string; newName?: string; newTag?: string }): Json {
  if (Array.isArray(node)) return node.map((n) => setImage(n, image));
  if (!isMap(node)) return node;
  const out: Record<string, Json> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === "image" && typeof value === "string") {
      const [name, tag] = splitImage(value);
      out[key] = name === image.name ? `${image.newName ?? name}${image.newTag ?? tag ? `:${image.newTag ?? tag}` : ""}` : value;
    } else out[key] = setImage(value, image);
  }
  return out;
}

function splitImage(ref: string): [name: string, tag: string | undefined] {
  const slash = ref.lastIndexOf("/");
  const colon = ref.lastIndexOf(":");
  return colon > slash ? [ref.slice(0, colon), ref.slice(colon + 1)] : [ref, undefined];
}
