import { Writable } from "node:stream";
import { createLogger, logFormatOf } from "@router/logging";

const SECRET = "sk-or-v1-super-secret-value";

function sink() {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  return { stream, text: () => chunks.join("") };
}

describe("log format", () => {
  it("is readable on a terminal and JSON anywhere else, unless LOG_FORMAT says", () => {
    expect(logFormatOf(undefined, true)).toBe("pretty");
    expect(logFormatOf(undefined, false)).toBe("json");
    expect(logFormatOf("", false)).toBe("json");
    expect(logFormatOf("json", true)).toBe("json");
    expect(logFormatOf("pretty", false)).toBe("pretty");
  });

  it("refuses any other LOG_FORMAT, naming the setting, as an operator-facing error", () => {
    expect(() => logFormatOf("yaml", true)).toThrow(/LOG_FORMAT: must be json or pretty/);
    try {
      logFormatOf("yaml", true);
    } catch (err) {
      expect((err as { operatorFacing?: boolean }).operatorFacing).toBe(true);
    }
  });

  it("writes a readable line: time, level, service, message and fields, still redacted", () => {
    const out = sink();
    const log = createLogger({ format: "pretty", destination: out.stream, base: { service: "ledger" } });
    log.info({ holdId: "hold_1", authorization: `Bearer ${SECRET}` }, "ledger.lease.granted");
    const text = out.text();
    expect(text).toMatch(/^\[\d{2}:\d{2}:\d{2}\.\d{3}\] INFO: ledger ledger\.lease\.granted\n/);
    expect(text).toContain('holdId: "hold_1"');
    expect(text).not.toContain(SECRET);
    expect(() => JSON.parse(text.split("\n")[0] ?? "")).toThrow();
  });
});
