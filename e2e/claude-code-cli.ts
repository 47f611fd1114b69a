import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * Claude Code, the real CLI from npm (`@anthropic-ai/claude-code`, pinned), run once in print mode
 * with its own defaults and only `ANTHROPIC_BASE_URL` and a Router key, in a throwaway home. Its
 * telemetry, updates and error reports are switched off by its documented variables.
 */

// The package's own launcher finds the platform binary it shipped (postinstall or not).
const CLAUDE = require.resolve("@anthropic-ai/claude-code/cli-wrapper.cjs");

export interface ClaudeRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The `--output-format json` result, when it printed one. */
  result: { is_error?: boolean; result?: string; subtype?: string; terminal_reason?: string } | null;
}

export function runClaude(gatewayUrl: string, key: string, prompt: string, opts: { model?: string; cwd: string; args?: string[]; timeoutMs?: number }): Promise<ClaudeRun> {
  const home = mkdtempSync(join(tmpdir(), "claude-home-"));
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: home,
    ANTHROPIC_BASE_URL: gatewayUrl,
    ANTHROPIC_API_KEY: key,
    DISABLE_TELEMETRY: "1",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_ERROR_REPORTING: "1",
    ...(opts.model ? { ANTHROPIC_MODEL: opts.model } : {}),
  };
  const args = [CLAUDE, "-p", prompt, "--output-format", "json", ...(opts.args ?? [])];
  return new Promise((resolve) => {
    execFile(process.execPath, args, { env, cwd: opts.cwd, timeout: opts.timeoutMs ?? 90_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      rmSync(home, { recursive: true, force: true });
      let result: ClaudeRun["result"] = null;
      try {
        result = JSON.parse(stdout.trim().split("\n").at(-1) ?? "") as ClaudeRun["result"];
      } catch {
        // printed no JSON: the run failed before answering; stdout and stderr say why
      }
      const code = err ? (typeof err.code === "number" ? err.code : null) : 0;
      resolve({ code, stdout, stderr, result });
    });
  });
}

export const describeRun = (run: ClaudeRun) => `exit ${run.code}\nstdout: ${run.stdout.slice(0, 2000)}\nstderr: ${run.stderr.slice(0, 2000)}`;
