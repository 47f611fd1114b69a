import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { AZURE_BENCH_DEPLOYMENT, FAKE_PROVIDER_KEY } from "./bench-keys";
import type { LoadTarget } from "./load";

/** A process's resident memory in MB (Linux), or null. */
export function rssMb(pid: number | undefined): number | null {
  if (!pid) return null;
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m?.[1] ? Math.round(Number(m[1]) / 1024) : null;
}

/** The instant fake OpenAI upstream in its own process (so its CPU is counted apart). */
export async function startFake(): Promise<{ url: string; origin: string; azureUrl: string; pid: number | undefined; stop(): void }> {
  const child = spawn(process.execPath, [join(__dirname, "fake-upstream-process.js")], { stdio: ["ignore", "pipe", "inherit"] });
  const line = await new Promise<string>((resolve) => child.stdout.once("data", (d: Buffer) => resolve(d.toString())));
  const { url, origin, azureUrl } = JSON.parse(line) as { url: string; origin: string; azureUrl: string };
  return { url, origin, azureUrl, pid: child.pid, stop: () => child.kill("SIGTERM") };
}

export { AZURE_BENCH_DEPLOYMENT, FAKE_PROVIDER_KEY };

/** A chat completion straight to the fake upstream: the baseline each added latency is measured against. */
export function directChat(fake: { origin: string }, body: string, stream: boolean): LoadTarget {
  return {
    origin: fake.origin,
    path: "/v1/chat/completions",
    headers: { "content-type": "application/json", authorization: `Bearer ${FAKE_PROVIDER_KEY}` },
    body,
    stream,
  };
}
