import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";

/** Raised when the child that prepares a new store fails; its message is the child's own words. */
export class NewStoreError extends Error {
  /** Printed without a stack: the child's message says what went wrong (a directory in use, a disk full). */
  readonly operatorFacing = true;
}

/**
 * Creates the embedded store under `dataDir` and applies every service's migrations in a child
 * process (`router migrate`), before this process opens it. Creating the tables touches far more of
 * PGlite's WASM memory than serving does, and WASM memory is never given back: done here, the first
 * start kept 20 to 50 MB more than any later start, and varied by as much from one first start to the
 * next. The child takes the directory's lock as every opener does, and has released it when it exits.
 */
export async function prepareNewStore(dataDir: string, env: NodeJS.ProcessEnv): Promise<void> {
  const cli = require.resolve("@router/cli");
  // The embedded store only: without DATABASE_URL the CLI opens <ROUTER_DATA_DIR>/pg.
  const { DATABASE_URL: _postgres, ...embeddedEnv } = env;
  try {
    await promisify(execFile)(process.execPath, [cli, "migrate"], {
      env: { ...embeddedEnv, ROUTER_DATA_DIR: dataDir },
      timeout: 180_000,
    });
  } catch (err) {
    const { stderr, message } = err as { stderr?: string; message: string };
    throw new NewStoreError(`preparing the new embedded store in ${join(dataDir, "pg")} failed: ${stderr?.trim() || message}`);
  }
}
