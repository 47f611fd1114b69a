/**
 * In-process signal that an import committed, so every catalog cache in this process re-reads at
 * once instead of waiting for its periodic check. Imports made by another process (the CLI) are
 * picked up by that periodic check.
 */
type Listener = () => Promise<void>;

const listeners = new Set<Listener>();

export function onCatalogImported(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Resolves once every listener has re-read; a failing listener does not fail the import. */
export async function announceCatalogImport(): Promise<void> {
  await Promise.allSettled([...listeners].map((l) => l()));
}
