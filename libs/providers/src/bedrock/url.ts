import type { UpstreamTarget } from "../types";

/** Where the endpoint serves from: the catalog's region, else the credential's. */
export function bedrockRegion(target: UpstreamTarget): string {
  const region = target.region ?? (target.cloud?.provider === "bedrock" ? target.cloud.region : null);
  if (!region) throw new Error("a Bedrock endpoint needs a region (the catalog's or the credential's)");
  return region;
}

/**
 * A path label as the AWS SDK writes it (`extendedEncodeURIComponent`): encodeURIComponent plus
 * `!'()*`, so the `:` of `anthropic.claude-sonnet-4-5-20250929-v1:0` goes as `%3A`. SigV4 then
 * escapes the path once more for its canonical form, as the service does.
 */
export function awsPathLabel(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/**
 * `{base}/model/{modelId}/{action}` (`invoke`, `converse-stream`, ...). The catalog's base URL names
 * the region as `{region}` (`https://bedrock-runtime.{region}.amazonaws.com`); a base URL without
 * the placeholder (an operator's proxy, a test's fake) is used as it is, the region then travels in
 * the signature's scope only.
 */
export function bedrockModelUrl(target: UpstreamTarget, action: string): URL {
  const base = target.baseUrl.replace(/\/+$/, "").replaceAll("{region}", bedrockRegion(target));
  return new URL(`${base}/model/${awsPathLabel(target.upstreamModel)}/${action}`);
}
