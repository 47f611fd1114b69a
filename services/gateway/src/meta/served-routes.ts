import type { Express } from "express";

/** A route the gateway serves: an express pattern (`/v1/keys/:hash`, `/v1/presets/*rest`) and its method. */
export interface ServedRoute {
  /** Lower-case method, or `all` for a route that answers every method. */
  method: string;
  path: string;
}

interface RouteLike {
  path: string | string[];
  methods: Record<string, boolean>;
}
interface LayerLike {
  route?: RouteLike;
  handle?: { stack?: LayerLike[] };
}

function walk(stack: readonly LayerLike[], out: ServedRoute[]): void {
  for (const layer of stack) {
    if (layer.route) {
      const paths = Array.isArray(layer.route.path) ? layer.route.path : [layer.route.path];
      const methods = layer.route.methods._all ? ["all"] : Object.keys(layer.route.methods).filter((m) => layer.route?.methods[m]);
      for (const path of paths) for (const method of methods) out.push({ method, path });
    } else if (layer.handle?.stack) {
      // Every router is mounted at the root, so its routes' paths are already absolute.
      walk(layer.handle.stack, out);
    }
  }
}

/**
 * The routes an express app serves, read from its router stack (routers mounted with `app.use`
 * included). Kept for the check that the OpenAPI document describes exactly what is served.
 */
export function servedRoutes(app: Express): ServedRoute[] {
  const out: ServedRoute[] = [];
  walk((app.router as unknown as { stack: LayerLike[] }).stack, out);
  return out;
}
