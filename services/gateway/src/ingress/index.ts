import { anthropicMessagesIngress } from "./anthropic-messages";
import { chatCompletionsIngress } from "./chat-completions";
import { embeddingsIngress } from "./embeddings";
import type { AnyIngress } from "./ingress";
import { responsesIngress } from "./responses";

/** Every format the gateway takes inference requests in; each is one route on the one pipeline. */
export const INGRESSES: AnyIngress[] = [chatCompletionsIngress, responsesIngress, anthropicMessagesIngress, embeddingsIngress];
