import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const KDAMONDS = "/sys/kernel/mm/damon/admin/kdamonds";

/**
 * The kernel's DAMON memory monitor. On some VMs the host runs it over all physical memory to
 * reclaim cold page cache: every sample interval (500 ms here) kdamond walks thousands of regions
 * for 10–15 ms of CPU, and every process on the box stalls at once while it does. On a 2-core
 * machine that lands in every p99 the bench measures (docs/performance.md), so the bench names it,
 * counts its CPU, and on request (`BENCH_PAUSE_DAMON=1`, as root) pauses it for the run.
 */
function monitorIds(): string[] {
  if (!existsSync(KDAMONDS)) return [];
  return readdirSync(KDAMONDS).filter((d) => /^\d+$/.test(d));
}

function readSetting(id: string, path: string): string {
  try {
    return readFileSync(join(KDAMONDS, id, path), "utf8").trim();
  } catch {
    return "";
  }
}

/** Running monitors, as "kdamond N (ops) sampling every M ms". */
export function runningDamonMonitors(): string[] {
  return monitorIds()
    .filter((id) => readSetting(id, "state") === "on")
    .map((id) => {
      const sampleUs = Number(readSetting(id, "contexts/0/monitoring_attrs/intervals/sample_us"));
      const every = Number.isFinite(sampleUs) && sampleUs > 0 ? `${sampleUs / 1000} ms` : "? ms";
      return `kdamond ${id} (${readSetting(id, "contexts/0/operations") || "?"}) sampling every ${every}`;
    });
}

/**
 * Turns the running monitors off and answers a function that turns the same ones back on (their
 * settings stay in sysfs meanwhile). Throws when a monitor cannot be paused (not root).
 */
export function pauseDamonMonitors(): () => void {
  const paused: string[] = [];
  const resume = () => {
    for (const id of paused.splice(0)) writeFileSync(join(KDAMONDS, id, "state"), "on");
  };
  try {
    for (const id of monitorIds()) {
      if (readSetting(id, "state") !== "on") continue;
      writeFileSync(join(KDAMONDS, id, "state"), "off");
      paused.push(id);
    }
  } catch (err) {
    resume();
    throw new Error(`BENCH_PAUSE_DAMON: cannot pause the kernel's DAMON monitor (run as root): ${String(err)}`);
  }
  if (paused.length > 0) {
    const commands = paused.map((id) => `echo on > ${join(KDAMONDS, id, "state")}`).join("; ");
    process.stdout.write(`Paused the kernel's DAMON monitor for the run; it is turned back on at the end (after a killed run: ${commands}).\n`);
  }
  return resume;
}
