/** A chat completion event stream as a client reads it. */
export interface ParsedEventStream {
  /** Parsed `data:` payloads, `[DONE]` excluded. */
  // Test code reads arbitrary chunk fields; the shape is what the test asserts.
  chunks: any[];
  /** Whether `data: [DONE]` arrived. */
  done: boolean;
  /** Keepalive comment lines (starting with `:`). */
  comments: string[];
}

/** Splits an event-stream text into its data chunks, the `[DONE]` marker and comment lines. */
export function parseEventStream(text: string): ParsedEventStream {
  const chunks: any[] = [];
  const comments: string[] = [];
  let done = false;
  for (const block of text.split("\n\n")) {
    for (const line of block.split("\n")) {
      if (line.startsWith(":")) comments.push(line);
      else if (line.startsWith("data: ")) {
        const data = line.slice(6);
        if (data === "[DONE]") done = true;
        else chunks.push(JSON.parse(data));
      }
    }
  }
  return { chunks, done, comments };
}

/** Text of every content delta of a stream's chunks. */
export const streamedText = (chunks: any[]): string =>
  chunks.map((c) => (c.choices ?? []).map((ch: any) => ch.delta?.content ?? "").join("")).join("");
