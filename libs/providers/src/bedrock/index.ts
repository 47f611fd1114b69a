import type { ProviderAdapter } from "../types";
import { bedrockAnthropicAdapter } from "./anthropic";
import { buildConverseRequest } from "./converse-request";
import { createConverseStreamDecoder, parseConverseCompletion } from "./converse-response";
import { bedrockEmbeddings } from "./embeddings";
import { parseBedrockError } from "./errors";
import { converseStreamFramer } from "./event-stream";
import { BedrockSigner } from "./signing";

/** Every model but Claude through the Converse API; Titan and Cohere embeddings through InvokeModel. */
export function bedrockConverseAdapter(signer: BedrockSigner): ProviderAdapter {
  return {
    family: "bedrock",
    authorize: (req, target) => signer.sign(req, target),
    createFramer: converseStreamFramer,
    buildRequest: buildConverseRequest,
    parseCompletion: parseConverseCompletion,
    createStreamDecoder: createConverseStreamDecoder,
    parseError: parseBedrockError,
    embeddings: bedrockEmbeddings,
  };
}

/** One signer for the process: it keeps assumed roles' keys until shortly before they expire. */
const signer = new BedrockSigner();

/** Amazon Bedrock's adapters by the endpoint's wire format (Claude speaks Anthropic's Messages body). */
export const bedrockAdapters = {
  anthropic: bedrockAnthropicAdapter(signer),
  bedrock: bedrockConverseAdapter(signer),
} satisfies Record<string, ProviderAdapter>;

export { bedrockAnthropicAdapter, BedrockSigner };
