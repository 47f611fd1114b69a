import { Writable } from "node:stream";
import { createLogger, runShutdown } from "@router/logging";

function sink() {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split("\n").filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { log: createLogger({ destination: stream, level: "info" }), lines };
}

describe("an ordered shutdown", () => {
  it("runs its steps in order and logs each one's time", async () => {
    const { log, lines } = sink();
    const order: string[] = [];
    const clean = await runShutdown(log, "svc", [
      { step: "gateway", run: async () => void order.push("gateway") },
      { step: "bus", run: () => void order.push("bus") },
      { step: "store", run: async () => void order.push("store") },
    ]);
    expect(clean).toBe(true);
    expect(order).toEqual(["gateway", "bus", "store"]);
    expect(lines.map((l) => [l.msg, l.step])).toEqual([
      ["svc.stop_step", "gateway"],
      ["svc.stop_step", "bus"],
      ["svc.stop_step", "store"],
    ]);
  });

  it("logs a step that runs past its timeout and goes on, so the stores still close", async () => {
    const { log, lines } = sink();
    const order: string[] = [];
    const clean = await runShutdown(log, "svc", [
      { step: "drain", run: () => new Promise(() => undefined), timeoutMs: 50 },
      { step: "broken", run: () => Promise.reject(new Error("boom")) },
      { step: "store", run: () => void order.push("store") },
    ]);
    expect(clean).toBe(false);
    expect(order).toEqual(["store"]);
    expect(lines.find((l) => l.msg === "svc.stop_step_timed_out")).toMatchObject({ step: "drain", timeoutMs: 50, level: "warn" });
    expect(lines.find((l) => l.msg === "svc.stop_step_failed")).toMatchObject({ step: "broken", level: "error" });
  });
});

describe("a shutdown watched step by step", () => {
  it("names each step to its watcher as it begins, so a second signal can hurry the one running", async () => {
    const { log } = sink();
    const seen: string[] = [];
    let hurried = false;
    await runShutdown(
      log,
      "svc",
      [
        {
          step: "gateway",
          // Finishes early only when hurried (a second Ctrl-C): the watcher calls hurry() on it.
          run: () => new Promise<void>((resolve) => setTimeout(resolve, hurried ? 0 : 50)),
          hurry: () => void (hurried = true),
        },
        { step: "store", run: () => void seen.push("store ran") },
      ],
      (step) => {
        seen.push(`${step.step} begins`);
        if (step.step === "gateway") step.hurry?.();
      },
    );
    expect(seen).toEqual(["gateway begins", "store begins", "store ran"]);
    expect(hurried).toBe(true);
  });
});
