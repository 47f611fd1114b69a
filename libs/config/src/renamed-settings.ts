/** A setting given under a former name, and the name it has now. */
export interface RenamedSetting {
  variable: string;
  now: string;
}

/**
 * The sign-in settings the gateway read before identity moved to the console, under their former
 * names: `GATEWAY_OAUTH_*`, `GATEWAY_WALLET_SIGNIN`, `GATEWAY_PKCE_KEY_*` are now `CONSOLE_*`.
 */
export function formerSignInSettings(environment: NodeJS.ProcessEnv): RenamedSetting[] {
  return Object.keys(environment)
    .filter((name) => /^GATEWAY_(OAUTH_|WALLET_SIGNIN$|PKCE_KEY_)/.test(name))
    .sort()
    .map((variable) => ({ variable, now: variable.replace(/^GATEWAY_/, "CONSOLE_") }));
}

/**
 * The environment with each renamed setting read under its current name too, so an upgrade keeps
 * working while the operator renames it (the current name wins when both are set).
 */
export function withCurrentNames(environment: NodeJS.ProcessEnv, renamed: readonly RenamedSetting[]): NodeJS.ProcessEnv {
  const out = { ...environment };
  for (const { variable, now } of renamed) if (out[now] === undefined) out[now] = environment[variable];
  return out;
}
