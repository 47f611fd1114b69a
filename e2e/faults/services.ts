import { once } from "node:events";
import { join } from "node:path";
import { httpReady, startNodeProcess, tcpReady, type ChildService, type Stack } from "@router/testkit";

/** The services behind the gateway that the suite kills and brings back, one at a time. */
export const BACKEND_SERVICES = ["routing", "ledger", "activity", "reports", "alerts", "broadcast", "runaway"] as const;
export type BackendService = (typeof BACKEND_SERVICES)[number];

const root = join(__dirname, "..", "..");

/** How the stack itself decides each service is up (libs/testkit/src/stack.ts), from the stack's env. */
function readiness(name: BackendService, env: Record<string, string>): () => Promise<boolean> {
  const port = (v: string) => Number(env[v]);
  switch (name) {
    case "routing":
      return () => httpReady(`${env.ROUTING_HTTP_URL}/v1/providers`);
    case "ledger":
      return async () => (await tcpReady(port("LEDGER_GRPC_PORT"))) && (await tcpReady(port("LEDGER_HTTP_PORT")));
    case "activity":
      return () => tcpReady(port("ACTIVITY_HTTP_PORT"));
    case "reports":
      return () => tcpReady(port("REPORTS_HTTP_PORT"));
    case "alerts":
      return () => tcpReady(port("ALERTS_HTTP_PORT"));
    case "broadcast":
      return () => httpReady(`${env.BROADCAST_HTTP_URL}/health`);
    case "runaway":
      return () => httpReady(`${env.RUNAWAY_HTTP_URL}/health`);
  }
}

function serviceOf(stack: Stack, name: string): { service: ChildService; at: number } {
  const at = stack.services.findIndex((s) => s.name === name);
  const service = stack.services[at];
  if (!service) throw new Error(`the stack runs no ${name}`);
  return { service, at };
}

/** Sends `signal` to one of the stack's processes and waits for it to exit. */
export async function signalService(stack: Stack, name: string, signal: NodeJS.Signals): Promise<void> {
  const { service } = serviceOf(stack, name);
  if (service.child.exitCode !== null || service.child.signalCode !== null) return;
  const exited = once(service.child, "exit");
  service.child.kill(signal);
  await exited;
}

/**
 * Starts a killed service again on the same ports and environment, in its place in the stack's
 * list (so the stack stops it with the rest); resolves once it is up.
 */
export async function restartService(stack: Stack, name: BackendService): Promise<void> {
  const { at } = serviceOf(stack, name);
  const service = await startNodeProcess(name, join(root, "services", name, "dist", "main.js"), stack.env, readiness(name, stack.env), 30_000);
  stack.services[at] = service;
}
