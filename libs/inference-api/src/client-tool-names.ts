/**
 * What a client called a tool that Router had to rename for providers: a function of a Responses
 * `namespace` group, or a Responses `custom` (freeform) tool, which providers only take as a
 * function. Keyed by the name the provider sees; an answer's tool call is rendered back under the
 * client's name. Tools Router did not rename are not in the map.
 */
export type ClientToolName = { kind: "function"; name: string; namespace: string } | { kind: "custom"; name: string };

export type ClientToolNames = ReadonlyMap<string, ClientToolName>;

export const NO_RENAMED_TOOLS: ClientToolNames = new Map();
