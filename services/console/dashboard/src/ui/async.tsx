import { useCallback, useEffect, useState } from "preact/hooks";
import { ApiError } from "../api/client";

export interface Loaded<T> {
  data: T | undefined;
  error: string | undefined;
  loading: boolean;
  reload: () => void;
}

/** Loads `fetcher` when `deps` change; keeps the last data while reloading. */
export function useLoad<T>(fetcher: () => Promise<T>, deps: readonly unknown[]): Loaded<T> {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<string>();
  const [loading, setLoading] = useState(true);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setLoading(true);
    fetcher()
      .then((d) => {
        if (!live) return;
        setData(d);
        setError(undefined);
      })
      .catch((err: unknown) => live && setError(messageOf(err)))
      .finally(() => live && setLoading(false));
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data, error, loading, reload };
}

export function messageOf(err: unknown): string {
  if (err instanceof ApiError) return err.message;
  return err instanceof Error ? err.message : String(err);
}

/**
 * Runs one save at a time and keeps its error. A form's fields live in the form's own state, which
 * a failed save does not touch: nothing typed is lost.
 */
export function useAction(): { busy: boolean; error: string | undefined; run: (fn: () => Promise<void>) => Promise<boolean>; clear: () => void } {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const run = useCallback(async (fn: () => Promise<void>) => {
    setBusy(true);
    setError(undefined);
    try {
      await fn();
      return true;
    } catch (err) {
      setError(messageOf(err));
      return false;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, run, clear: () => setError(undefined) };
}

export function ErrorNotice({ error }: { error: string | undefined }) {
  if (!error) return null;
  return (
    <p class="error" role="alert">
      {error}
    </p>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="loading" role="status" aria-live="polite">
      Loading {what}…
    </p>
  );
}

/** The loaded value, or its loading line or error. */
export function Show<T>({ load, what, children }: { load: Loaded<T>; what: string; children: (data: T) => preact.ComponentChildren }) {
  if (load.data === undefined) return load.error ? <ErrorNotice error={load.error} /> : <Loading what={what} />;
  return (
    <>
      <ErrorNotice error={load.error} />
      {children(load.data)}
    </>
  );
}
