import { anthropicMessagesIngress } from "./anthropic-messages";
import { chatCompletionsIngress } from "./chat-completions";
import { embeddingsIngress } from "./embeddings";
import type { AnyIngress } from "./ingress";
import { storingResponsesIngress } from "./responses";
import type { ResponsesStorage } from "./responses/stored-input";

/** Every format the gateway takes inference requests in; each is one route on the one pipeline. */
export function ingressesWith(storage: ResponsesStorage): AnyIngress[] {
  return [chatCompletionsIngress, storingResponsesIngress(storage), anthropicMessagesIngress, embeddingsIngress];
}
