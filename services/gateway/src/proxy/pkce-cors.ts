import type { NextFunction, Request, Response } from "express";

/**
 * Where an app exchanges its PKCE code for a key (the console serves it). Any web origin may call
 * it: CORS is answered at the edge, so that a refusal made here (a 429) is readable by the app too.
 */
export const PKCE_EXCHANGE_PATH = "/v1/auth/keys";

/** Lets any origin read the exchange's answer, whoever gives it. */
export function pkceExchangeAnyOrigin(_req: Request, res: Response, next: NextFunction): void {
  res.setHeader("Access-Control-Allow-Origin", "*");
  next();
}

/** The exchange's CORS preflight: any origin, POST, a JSON body. */
export function pkceExchangePreflight(_req: Request, res: Response): void {
  res.setHeader("Access-Control-Allow-Origin", "*");
  res.setHeader("Access-Control-Allow-Methods", "POST");
  res.setHeader("Access-Control-Allow-Headers", "content-type");
  res.setHeader("Access-Control-Max-Age", "600");
  res.status(204).end();
}
