import { formatUsd, limitReachedSentence } from "../src/holds/sentences";

describe("formatUsd", () => {
  it.each([
    [0n, "$0.00"],
    [1_000_000_000n, "$1.00"],
    [1_500_000_000n, "$1.50"],
    [2_500_000n, "$0.0025"],
    [1n, "$0.000000001"],
    [123_456_789_000_000_000n, "$123456789.00"],
    [-250_000_000n, "-$0.25"],
  ])("writes %p nanodollars as %s", (nanos, text) => {
    expect(formatUsd(nanos)).toBe(text);
  });
});

describe("limitReachedSentence", () => {
  const ceiling = {
    subjectKind: "agent",
    subjectId: "planner",
    limit: 5_000_000_000n,
    hard: true,
    includeByok: true,
  };

  it("names the subject, window, limit and when it resets", () => {
    expect(
      limitReachedSentence({
        ...ceiling,
        window: "weekly",
        windowStart: new Date("2026-11-16T00:00:00.000Z"),
        windowEnd: new Date("2026-11-23T00:00:00.000Z"),
      }),
    ).toBe("This agent has reached its weekly spend limit of $5.00; the limit resets at 2026-11-23T00:00:00.000Z.");
  });

  it("leaves out the reset for a lifetime limit", () => {
    expect(
      limitReachedSentence({ ...ceiling, window: "lifetime", windowStart: new Date(0), windowEnd: null }),
    ).toBe("This agent has reached its lifetime spend limit of $5.00.");
  });
});
