/** A typed JSON text as the API takes it: the parsed value, else the text itself for the API to refuse by name. */
export function jsonOf(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
