import { ConfigError, loadConfig, env } from "@router/config";
import { z } from "zod";
import { exitOnStartFailure } from "@router/logging";

function capture() {
  const out = { text: "", code: -1 };
  return { out, sink: { write: (t: string) => (out.text += t), exit: (c: number) => (out.code = c) } };
}

describe("a service that cannot start", () => {
  it("prints a configuration error as what to fix, naming the setting, with no stack", () => {
    let err: unknown;
    try {
      loadConfig(z.object({ PORT: env.port(8080) }), { PORT: "eighty" });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const { out, sink } = capture();
    exitOnStartFailure("ledger", sink)(err);
    expect(out.code).toBe(1);
    expect(out.text).toMatch(/^ledger failed to start: invalid configuration:\n {2}PORT: /);
    expect(out.text).not.toMatch(/\n\s+at /);
  });

  it("keeps the stack of anything else: an unexpected failure is a bug to report", () => {
    const { out, sink } = capture();
    exitOnStartFailure("gateway", sink)(new TypeError("cannot read properties of undefined"));
    expect(out.code).toBe(1);
    expect(out.text).toMatch(/^gateway failed to start: TypeError: cannot read properties of undefined\n\s+at /);
  });
});
