/** How deep the suite nests a JSON value: far past any real schema, well inside the body size limits. */
export const DEEP = 100_000;

/** `{"a":{"a":…1…}}`, `depth` objects deep, built as text (JSON.stringify would overflow the stack). */
export function deepObject(depth: number): string {
  return `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
}

/** `[[…1…]]`, `depth` arrays deep. */
export function deepArray(depth: number): string {
  return `${"[".repeat(depth)}1${"]".repeat(depth)}`;
}

/** A request body with one field nested `DEEP` levels, and the top-level field the 400 must name. */
export interface DeepBody {
  path: string;
  /** Where the nesting is, as the table prints it. */
  at: string;
  /** The top-level field the error must name. */
  field: string;
  body: string;
}

const MODEL = '"model":"openai/gpt-4o-mini"';
// The Messages ingress serves OpenAI models too: every body here would reach the one fake provider.
const MESSAGES_MODEL = '"model":"openai/gpt-4o-mini","max_tokens":64';
const USER = '"messages":[{"role":"user","content":"hi"}]';

/**
 * Each JSON field of each ingress that takes free-form JSON, nested where a client could: message
 * content, tool schemas, structured-output schemas, metadata, and the whole body's routing options.
 */
export function deepBodies(): DeepBody[] {
  const o = deepObject(DEEP);
  const a = deepArray(DEEP);
  const chat = "/v1/chat/completions";
  const messages = "/v1/messages";
  const responses = "/v1/responses";
  return [
    { path: chat, at: "messages[0].content", field: "messages", body: `{${MODEL},"messages":[{"role":"user","content":${a}}]}` },
    { path: chat, at: "tools[0].function.parameters", field: "tools", body: `{${MODEL},${USER},"tools":[{"type":"function","function":{"name":"f","parameters":${o}}}]}` },
    { path: chat, at: "response_format.json_schema.schema", field: "response_format", body: `{${MODEL},${USER},"response_format":{"type":"json_schema","json_schema":{"name":"s","schema":${o}}}}` },
    { path: chat, at: "metadata", field: "metadata", body: `{${MODEL},${USER},"metadata":${o}}` },
    { path: chat, at: "provider", field: "provider", body: `{${MODEL},${USER},"provider":${o}}` },
    { path: messages, at: "messages[0].content", field: "messages", body: `{${MESSAGES_MODEL},"messages":[{"role":"user","content":${a}}]}` },
    { path: messages, at: "tools[0].input_schema", field: "tools", body: `{${MESSAGES_MODEL},${USER},"tools":[{"name":"f","input_schema":${o}}]}` },
    { path: messages, at: "system", field: "system", body: `{${MESSAGES_MODEL},${USER},"system":${a}}` },
    { path: messages, at: "metadata", field: "metadata", body: `{${MESSAGES_MODEL},${USER},"metadata":${o}}` },
    { path: `${messages}/count_tokens`, at: "tools[0].input_schema", field: "tools", body: `{${MESSAGES_MODEL},${USER},"tools":[{"name":"f","input_schema":${o}}]}` },
    { path: responses, at: "input", field: "input", body: `{${MODEL},"input":${a}}` },
    { path: responses, at: "tools[0].parameters", field: "tools", body: `{${MODEL},"input":"hi","tools":[{"type":"function","name":"f","parameters":${o}}]}` },
    { path: responses, at: "text.format.schema", field: "text", body: `{${MODEL},"input":"hi","text":{"format":{"type":"json_schema","name":"s","schema":${o}}}}` },
    { path: responses, at: "metadata", field: "metadata", body: `{${MODEL},"input":"hi","metadata":${o}}` },
    { path: `${responses}/input_tokens`, at: "input", field: "input", body: `{${MODEL},"input":${a}}` },
    { path: "/v1/embeddings", at: "input", field: "input", body: `{"model":"openai/text-embedding-3-small","input":${a}}` },
  ];
}
