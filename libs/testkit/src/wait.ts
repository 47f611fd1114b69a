/** Polls `probe` until it returns a value other than undefined/false, or fails after `timeoutMs`. */
export async function waitFor<T>(
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  opts: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<T> {
  const deadline = Date.now() + (opts.timeoutMs ?? 10_000);
  let lastError: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined && v !== false) return v as T;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${opts.what ?? "condition"}${lastError ? `: ${String(lastError)}` : ""}`);
    }
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 50));
  }
}
