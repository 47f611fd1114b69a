import { DomainError, invalid } from "@router/errors";
import { userMessage } from "@router/inference-api";
import type { Logger } from "@router/logging";
import type { Caller } from "../../auth/caller";
import type { StoragePolicy } from "../../stored-responses/storage-policy";
import type { StoredResponse, StoredResponses } from "../../stored-responses/stored-response-store";

/** What the Responses ingress keeps answers in, and what decides whether it may. */
export interface ResponsesStorage {
  responses: StoredResponses;
  policy: StoragePolicy;
  log: Logger;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === "object" && !Array.isArray(v);

/**
 * A Responses body completed with what the caller's organisation stored, before it is parsed:
 *
 * - `store` decided: kept unless the request says `store: false` or a policy forbids it
 *   (storage-policy.ts). A forbidden explicit `store: true` is a 400 naming the policy; a default
 *   (absent) `store` quietly becomes `false`, so the answer says nothing was kept.
 * - `previous_response_id`: that response's input items and output items go before `input`, as
 *   OpenAI rebuilds the conversation (its `instructions` are not carried over). Unknown, expired,
 *   deleted or another organisation's: 404 naming the field.
 * - `item_reference` items: replaced by the stored output item with that id. Not found: 404 naming
 *   `input.N.id`, as OpenAI answers ("Item with id '…' not found.").
 *
 * Anything malformed beyond these fields is left for the parser to name.
 */
export async function withStoredInput(body: unknown, caller: Caller, storage: ResponsesStorage): Promise<unknown> {
  if (!isObject(body)) return body;
  const out: Json = { ...body };
  // `null` is the default, as absent; anything else but a boolean is left for the parser to refuse.
  if (body.store === true || body.store == null) out.store = await mayStore(body, caller, storage);
  const previousId = body.previous_response_id;
  const references = Array.isArray(body.input) ? referencedIds(body.input) : new Map<number, string>();
  if (typeof previousId !== "string" && references.size === 0) return out;

  let history: unknown[] = [];
  if (typeof previousId === "string") {
    const previous = await storage.responses.get(caller.orgId, previousId);
    if (!previous) {
      throw new DomainError("not_found", `previous_response_id: Previous response with id '${previousId}' not found.`, {
        details: { field: "previous_response_id" },
      });
    }
    history = conversationOf(previous);
  }
  let input: unknown = body.input;
  if (Array.isArray(input) && references.size > 0) {
    const found = await storage.responses.items(caller.orgId, [...new Set(references.values())]);
    input = (input as unknown[]).map((item, i) => {
      const id = references.get(i);
      if (id === undefined) return item;
      const stored = found.get(id);
      if (!stored) throw new DomainError("not_found", `input.${i}.id: Item with id '${id}' not found.`, { details: { field: `input.${i}.id` } });
      return stored.item;
    });
  }
  if (history.length > 0) out.input = [...history, ...(typeof input === "string" ? [userMessage(input)] : Array.isArray(input) ? (input as unknown[]) : [])];
  else out.input = input;
  return out;
}

/** The items of a stored response as the next request's input: what it was given, then what it answered. */
function conversationOf(stored: StoredResponse): unknown[] {
  const output: unknown[] = Array.isArray(stored.response.output) ? (stored.response.output as unknown[]) : [];
  return [...stored.input, ...output];
}


/** Positions of `item_reference` items and the ids they name; a reference without a string id is a 400. */
function referencedIds(input: unknown[]): Map<number, string> {
  const ids = new Map<number, string>();
  input.forEach((item, i) => {
    if (!isObject(item) || item.type !== "item_reference") return;
    if (typeof item.id !== "string" || item.id === "" || item.id.length > 256) throw invalid(`input.${i}.id`, "expected the id of a stored item");
    ids.set(i, item.id);
  });
  return ids;
}

/** Whether the answer is kept: false when a policy forbids it and the request did not insist. */
async function mayStore(body: Json, caller: Caller, storage: ResponsesStorage): Promise<boolean> {
  const zdr = isObject(body.provider) && body.provider.zdr === true;
  const refusal = await storage.policy.refusal(caller, zdr);
  if (!refusal) return true;
  if (body.store === true) {
    throw new DomainError(refusal.code, `store: ${refusal.message}; send store: false`, {
      details: { field: "store", policy: refusal.policy },
    });
  }
  return false;
}
