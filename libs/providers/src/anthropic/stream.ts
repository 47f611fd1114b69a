import { asNumber, asRecord, parseRecord, asString, type ChunkDelta, type SseMessage, type StreamDecoder, type StreamEvent } from "../types";
import { anthropicUsage, normalizeAnthropicStop, redactedThinkingDetail, thinkingDetail } from "./response";

const chunk = (delta: ChunkDelta, content: boolean): StreamEvent => ({
  type: "chunk",
  content,
  choices: [{ index: 0, delta, finish_reason: null, native_finish_reason: null }],
});

/**
 * Messages SSE → chunks. message_start carries input usage; content blocks (text, thinking,
 * tool_use) stream as deltas; message_delta carries the stop reason and output usage. Thinking also
 * streams as `reasoning_details` pieces (text, then the signature alone) so a client can echo it.
 * With `keepNative`, each event also goes on as Anthropic sent it, before what it means.
 */
export function createAnthropicStreamDecoder(keepNative = false): StreamDecoder {
  // Content block index → the OpenAI tool-call index of a tool_use block.
  const toolIndexOfBlock = new Map<number, number>();
  let toolCount = 0;
  // Content block index → the reasoning_details index of a thinking block.
  const reasoningIndexOfBlock = new Map<number, number>();
  let reasoningCount = 0;
  // The usage fields reported so far: message_delta's counts are cumulative and replace message_start's.
  let reported: Record<string, unknown> = {};

  const thinkingPiece = (blockIndex: number, text: string, signature: string | null): StreamEvent => {
    const index = reasoningIndexOfBlock.get(blockIndex) ?? 0;
    const delta: ChunkDelta = { reasoning_details: [thinkingDetail(text, signature, index)] };
    if (text) delta.reasoning = text;
    return chunk(delta, true);
  };

  return {
    decode(message: SseMessage, out: StreamEvent[]): void {
      if (keepNative) out.push({ type: "native", message });
      const ev = parseRecord(message.data);
      if (!ev) return;
      switch (message.event ?? ev.type) {
        case "message_start": {
          const msg = asRecord(ev.message);
          reported = asRecord(msg?.usage) ?? {};
          out.push(chunk({ role: "assistant" }, false));
          out.push({ type: "usage", usage: anthropicUsage(reported) });
          return;
        }
        case "content_block_start": {
          const block = asRecord(ev.content_block);
          const index = asNumber(ev.index);
          if (block?.type === "tool_use") {
            const toolIndex = toolCount++;
            toolIndexOfBlock.set(index, toolIndex);
            out.push(
              chunk(
                {
                  tool_calls: [
                    { index: toolIndex, id: asString(block.id) ?? "", type: "function", function: { name: asString(block.name) ?? "", arguments: "" } },
                  ],
                },
                true,
              ),
            );
          } else if (block?.type === "text" && asString(block.text)) {
            out.push(chunk({ content: asString(block.text) ?? "" }, true));
          } else if (block?.type === "thinking") {
            reasoningIndexOfBlock.set(index, reasoningCount++);
            // The start carries empty text and signature today; anything in them is part of the block.
            const text = asString(block.thinking) ?? "";
            const signature = asString(block.signature);
            if (text) out.push(thinkingPiece(index, text, null));
            if (signature) out.push(thinkingPiece(index, "", signature));
          } else if (block?.type === "redacted_thinking") {
            // Arrives whole in its start event; there is nothing readable to stream.
            const data = asString(block.data);
            if (data) out.push(chunk({ reasoning_details: [redactedThinkingDetail(data, reasoningCount++)] }, true));
          }
          return;
        }
        case "content_block_delta": {
          const delta = asRecord(ev.delta);
          switch (delta?.type) {
            case "text_delta": {
              const text = asString(delta.text) ?? "";
              if (text) out.push(chunk({ content: text }, true));
              return;
            }
            case "thinking_delta": {
              const thinking = asString(delta.thinking) ?? "";
              if (thinking) out.push(thinkingPiece(asNumber(ev.index), thinking, null));
              return;
            }
            case "signature_delta": {
              const signature = asString(delta.signature);
              if (signature) out.push(thinkingPiece(asNumber(ev.index), "", signature));
              return;
            }
            case "input_json_delta": {
              const index = toolIndexOfBlock.get(asNumber(ev.index)) ?? 0;
              out.push(chunk({ tool_calls: [{ index, function: { arguments: asString(delta.partial_json) ?? "" } }] }, true));
              return;
            }
            default:
              return; // future kinds carry nothing for the client
          }
        }
        case "message_delta": {
          const delta = asRecord(ev.delta);
          const native = asString(delta?.stop_reason);
          const u = asRecord(ev.usage);
          if (u) {
            // Newer API versions repeat input counts here; keep what message_start said otherwise.
            reported = { ...reported, ...u };
            out.push({ type: "usage", usage: anthropicUsage(reported) });
          }
          if (native) {
            out.push({
              type: "chunk",
              content: false,
              choices: [{ index: 0, delta: {}, finish_reason: normalizeAnthropicStop(native), native_finish_reason: native }],
            });
          }
          return;
        }
        case "message_stop":
          out.push({ type: "done" });
          return;
        case "error": {
          const err = asRecord(ev.error);
          out.push({ type: "error", code: asString(err?.type), message: asString(err?.message) });
          return;
        }
        default:
          return; // ping, content_block_stop
      }
    },
  };
}
