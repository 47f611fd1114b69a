import { z } from "zod";
import type { ReasoningDetail } from "@router/chat-request";
import type { OutputBlock } from "../output-blocks";

/**
 * The `encrypted_content` of a Responses reasoning item: the `reasoning_details` entry a provider
 * needs to continue that reasoning (Anthropic's signed thinking: text and signature; redacted
 * thinking: its data), with its `format`, as base64url JSON. With `store: false` nothing is kept, so
 * the item carries it: a client echoes the item in its next `input` (as OpenAI clients echo reasoning
 * items when nothing is stored; a stored item named by `item_reference` comes back the same way) and
 * the entry goes back on the assistant turn, where Anthropic checks the
 * signature. The whole entry travels, thinking text included, so the turn continues even when a
 * client drops the item's `content`. Opaque to clients, not secret: the text is in `content` too.
 */

const format = z.string().min(1).nullable();
const carriedDetail = z.discriminatedUnion("type", [
  z.object({ type: z.literal("reasoning.text"), text: z.string(), signature: z.string().min(1), format }),
  z.object({ type: z.literal("reasoning.encrypted"), data: z.string().min(1), format }),
]);
type CarriedDetail = z.infer<typeof carriedDetail>;

const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** The item's `encrypted_content` for a reasoning block, or null when it carries nothing to continue (unsigned reasoning). */
export function encryptedContentOf(block: OutputBlock): string | null {
  let detail: CarriedDetail;
  if (block.kind === "reasoning" && block.signature) {
    detail = { type: "reasoning.text", text: block.text, signature: block.signature, format: block.format };
  } else if (block.kind === "redacted") {
    detail = { type: "reasoning.encrypted", data: block.data, format: block.format };
  } else return null;
  return Buffer.from(JSON.stringify(detail), "utf8").toString("base64url");
}

/** The reasoning detail an echoed `encrypted_content` carries, or null when it is not one Router made. */
export function reasoningDetailOf(encrypted: string): ReasoningDetail | null {
  if (!BASE64URL.test(encrypted)) return null;
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(encrypted, "base64url").toString("utf8"));
  } catch {
    return null;
  }
  const parsed = carriedDetail.safeParse(json);
  return parsed.success ? parsed.data : null;
}
