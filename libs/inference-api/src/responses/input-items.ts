type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === "object" && !Array.isArray(v);

/** A Responses input's text as the one user message it stands for. */
export const userMessage = (text: string): Json => ({ type: "message", role: "user", content: [{ type: "input_text", text }] });

/** The input as stored-response items: a string input is one user message. */
export function inputItemsOf(input: unknown): Json[] {
  if (typeof input === "string") return [userMessage(input)];
  return Array.isArray(input) ? input.filter(isObject) : [];
}
