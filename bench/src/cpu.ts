import { readdirSync, readFileSync } from "node:fs";

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

/** Processes whose CPU a run is charged with: named ones by pid, servers by command name. */
export interface CpuSubjects {
  pids: Record<string, number | undefined>;
  /** Every process with this command name counts (Postgres forks a backend per connection). */
  commands: Record<string, string>;
}

export type CpuSample = Map<string, number>;

function cpuMsOf(pid: number): { comm: string; ms: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name is in parentheses and may hold spaces; the fields after it are fixed.
    const close = stat.lastIndexOf(")");
    const comm = stat.slice(stat.indexOf("(") + 1, close);
    const fields = stat.slice(close + 2).split(" ");
    const ticks = Number(fields[11]) + Number(fields[12]);
    return { comm, ms: (ticks * 1000) / TICKS_PER_SECOND };
  } catch {
    return null; // the process ended between listing and reading
  }
}

/** CPU milliseconds (user + system) used so far by each subject. Linux only. */
export function sampleCpu(subjects: CpuSubjects): CpuSample {
  const out: CpuSample = new Map();
  for (const [name, pid] of Object.entries(subjects.pids)) {
    const s = pid ? cpuMsOf(pid) : null;
    if (s) out.set(name, s.ms);
  }
  const byCommand = new Map(Object.entries(subjects.commands).map(([name, comm]) => [comm, name]));
  if (byCommand.size === 0) return out;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const s = cpuMsOf(Number(entry));
    const name = s && byCommand.get(s.comm);
    if (s && name) out.set(name, (out.get(name) ?? 0) + s.ms);
  }
  return out;
}

/** CPU milliseconds per request for each subject between two samples. */
export function cpuPerRequest(before: CpuSample, after: CpuSample, requests: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, ms] of after) {
    // A Postgres backend that exited during the run takes its time with it: clamp at zero.
    out[name] = +(Math.max(0, ms - (before.get(name) ?? 0)) / Math.max(1, requests)).toFixed(3);
  }
  return out;
}
