import { Router, type Request, type RequestHandler } from "express";

export interface RegionHeaders {
  /** The header a trusted edge (CDN, load balancer) sets to the caller's country, e.g. `cf-ipcountry`. */
  region?: string;
  /** The header it sets to the country subdivision, e.g. `cloudfront-viewer-country-region`. */
  subdivision?: string;
}

// ISO 3166-1 alpha-2 and the code part of ISO 3166-2; anything else (or an edge's "XX"/"T1"
// placeholders for unknown and Tor) is no region.
const COUNTRY = /^[A-Z]{2}$/;
const SUBDIVISION = /^[A-Z0-9]{1,3}$/;
const UNKNOWN = new Set(["XX", "T1", "ZZ"]);

function headerValue(req: Request, name: string | undefined, form: RegExp): string | null {
  if (!name) return null;
  const raw = req.headers[name.toLowerCase()];
  const value = (Array.isArray(raw) ? raw[0] : raw)?.trim().toUpperCase();
  return value && form.test(value) && !UNKNOWN.has(value) ? value : null;
}

/**
 * `GET /v1/region` (public): the caller's coarse region as the configured trusted edge header says,
 * null without one (a client cannot name its own region unless the operator trusts a header that
 * its edge overwrites). Informational only: nothing is refused by region.
 */
export function regionRoute(deps: { headers: RegionHeaders; publicLimit: RequestHandler }): Router {
  const router = Router();
  router.get("/v1/region", deps.publicLimit, (req, res) => {
    const region = headerValue(req, deps.headers.region, COUNTRY);
    res.json({ data: { region, subdivision: region ? headerValue(req, deps.headers.subdivision, SUBDIVISION) : null } });
  });
  return router;
}
