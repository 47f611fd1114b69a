import { createServer } from "node:net";

/** A port the runner needs cannot be listened on: the message names the setting to change. */
export class PortUnavailableError extends Error {
  /** Printed without a stack: the message says what to do. */
  readonly operatorFacing = true;
}

interface NeededPort {
  setting: string;
  port: number;
  host: string;
}

/** Resolves with the error of listening on `host:port` now, or null when it could (and stopped again). */
function listenError(host: string, port: number): Promise<NodeJS.ErrnoException | null> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", (err: NodeJS.ErrnoException) => resolve(err));
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve(null)));
  });
}

/**
 * Checks, before anything is created on disk, that the public port and the metrics port can be
 * listened on, so a second `npm start` (or another program on 8080) is one line naming the setting,
 * not a stack trace after a data directory was made. Port 0 (any free port) is not checked.
 */
export async function checkPortsAvailable(ports: { PORT: number; HOST: string; METRICS_PORT: number; METRICS_HOST: string }): Promise<void> {
  const needed: NeededPort[] = [
    { setting: "PORT", port: ports.PORT, host: ports.HOST },
    { setting: "METRICS_PORT", port: ports.METRICS_PORT, host: ports.METRICS_HOST },
  ];
  for (const { setting, port, host } of needed) {
    if (port === 0) continue;
    const err = await listenError(host, port);
    if (!err) continue;
    const other = setting === "PORT" ? `; a second router needs another METRICS_PORT too (now ${ports.METRICS_PORT})` : "; 0 picks a free one";
    if (err.code === "EADDRINUSE") {
      throw new PortUnavailableError(`${setting}=${port}: ${host}:${port} is in use (another router or program): stop it, or set ${setting} to a free port${other}`);
    }
    throw new PortUnavailableError(`${setting}=${port}: cannot listen on ${host}:${port} (${err.code ?? err.message}): set ${setting} to another port${other}`);
  }
}
