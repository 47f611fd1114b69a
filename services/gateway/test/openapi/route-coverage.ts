import { match } from "path-to-regexp";
import type { ServedRoute } from "../../src/meta/served-routes";

export interface DescribedOperation {
  method: string;
  /** OpenAPI form: `/v1/keys/{hash}`. */
  path: string;
}

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

export function describedOperations(document: { paths?: Record<string, Record<string, unknown> | undefined> }): DescribedOperation[] {
  return Object.entries(document.paths ?? {}).flatMap(([path, item]) =>
    Object.keys(item ?? {})
      .filter((m) => METHODS.includes(m))
      .map((method) => ({ method, path })),
  );
}

/** A concrete path for an OpenAPI path, so express patterns can be matched against it. */
const concrete = (path: string) => path.replace(/\{(\w+)\}/g, "sample-$1");
/** The OpenAPI form of an express pattern without wildcards. */
const openApiForm = (pattern: string) => pattern.replace(/:(\w+)/g, "{$1}");

/**
 * What the description and the served routes disagree on. A served route with one method must be
 * described with that method and path; a wildcard or every-method route (forwarded to another
 * service) must cover at least one described operation; every described operation must be
 * answered by some served route.
 */
export function routeMismatches(served: readonly ServedRoute[], described: readonly DescribedOperation[]): string[] {
  const matchers = served.map((r) => ({ ...r, matches: match(r.path, { decode: false }) }));
  const problems: string[] = [];
  for (const op of described) {
    const found = matchers.some((r) => (r.method === op.method || r.method === "all") && r.matches(concrete(op.path)) !== false);
    if (!found) problems.push(`described but not served: ${op.method.toUpperCase()} ${op.path}`);
  }
  for (const r of matchers) {
    const open = r.method === "all" || r.path.includes("*");
    const covered = open
      ? described.some((op) => (r.method === "all" || op.method === r.method) && r.matches(concrete(op.path)) !== false)
      : described.some((op) => op.method === r.method && op.path === openApiForm(r.path));
    if (!covered) problems.push(`served but not described: ${r.method.toUpperCase()} ${r.path}`);
  }
  return problems;
}
