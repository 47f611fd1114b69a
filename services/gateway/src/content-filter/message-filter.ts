import type { ContentVerdict } from "@router/content-filter";
import type { ChatMessage } from "@router/chat-request";

type Content = ChatMessage["content"];

/**
 * Runs the verdict's filters over the text the messages send upstream (string contents and text
 * parts of every role) and answers the messages with redacted spans rewritten; the same array
 * when nothing changed. Tool-call arguments are JSON a rewrite could break: they are not scanned.
 */
export function filterMessages(verdict: ContentVerdict, messages: ChatMessage[]): ChatMessage[] {
  let changed = false;
  const out = messages.map((message) => {
    const content = filterContent(verdict, message.content);
    if (content === message.content) return message;
    changed = true;
    return { ...message, content } as ChatMessage;
  });
  return changed ? out : messages;
}

function filterContent(verdict: ContentVerdict, content: Content): Content {
  if (typeof content === "string") return verdict.filter(content);
  if (!Array.isArray(content)) return content;
  let changed = false;
  const parts = content.map((part) => {
    if (part.type !== "text") return part;
    const text = verdict.filter(part.text);
    if (text === part.text) return part;
    changed = true;
    return { ...part, text };
  });
  return changed ? parts : content;
}
