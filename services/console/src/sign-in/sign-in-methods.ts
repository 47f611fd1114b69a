import { Router, type Request, type Response } from "express";
import type { OAuthClients } from "./oauth-providers";

/** `GET /v1/auth/methods` (public): what this deployment offers on its sign-in page. */
export function signInMethodsRoute(deps: { clients: OAuthClients; wallet: boolean }): Router {
  const router = Router();
  router.get("/v1/auth/methods", (_req: Request, res: Response) => {
    res.json({ data: { management_key: true, oauth: deps.clients.configured(), wallet: deps.wallet } });
  });
  return router;
}
