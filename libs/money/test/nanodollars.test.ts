import { basisPointsOf, costOfTokens, fromUsd, maxNanos, nanosString, toNanos, toUsd, usdDecimal } from "@router/money";

describe("costOfTokens", () => {
  it("charges a whole nanodollar for one token at one nanodollar per million", () => {
    expect(costOfTokens(1, 1n)).toBe(1n);
  });

  it("charges nothing for zero tokens", () => {
    expect(costOfTokens(0, 3_000_000_000n)).toBe(0n);
  });

  it("charges nothing at a zero price", () => {
    expect(costOfTokens(1_000_000, 0n)).toBe(0n);
  });

  it("is exact when the product divides evenly", () => {
    // 1,000 tokens at $3 per million = $0.003.
    expect(costOfTokens(1_000, 3_000_000_000n)).toBe(3_000_000n);
    expect(costOfTokens(1_000_000, 150n)).toBe(150n);
  });

  it("rounds a fractional nanodollar up, never down", () => {
    expect(costOfTokens(999_999, 1n)).toBe(1n);
    expect(costOfTokens(1_000_001, 1n)).toBe(2n);
    expect(costOfTokens(3, 333_333n)).toBe(1n);
  });

  it("stays exact for amounts beyond 2^53", () => {
    const tokens = 123_456_789_012_345n;
    const price = 987_654_321_098n;
    const product = tokens * price;
    const expected = product / 1_000_000n + (product % 1_000_000n === 0n ? 0n : 1n);
    expect(expected > BigInt(Number.MAX_SAFE_INTEGER)).toBe(true);
    expect(costOfTokens(tokens, price)).toBe(expected);
  });

  it("accepts bigint and number token counts alike", () => {
    expect(costOfTokens(2_500n, 2_000_000_000n)).toBe(costOfTokens(2_500, 2_000_000_000n));
  });

  it("rejects a negative token count", () => {
    expect(() => costOfTokens(-1, 1_000n)).toThrow(RangeError);
  });

  it("rejects a negative price", () => {
    expect(() => costOfTokens(10, -1n)).toThrow(RangeError);
  });
});

describe("fromUsd", () => {
  it("turns 0.1 into exactly 100000000 nanodollars, not a float artefact", () => {
    expect(fromUsd(0.1)).toBe(100_000_000n);
  });

  it("keeps sums that are inexact in binary exact", () => {
    expect(fromUsd(0.3)).toBe(300_000_000n);
    expect(fromUsd(19.99)).toBe(19_990_000_000n);
    expect(fromUsd(1.15)).toBe(1_150_000_000n);
  });

  it("reads one nanodollar from 1e-9", () => {
    expect(fromUsd(1e-9)).toBe(1n);
  });

  it("reads whole dollars", () => {
    expect(fromUsd(0)).toBe(0n);
    expect(fromUsd(25)).toBe(25_000_000_000n);
  });

  it("reads decimal strings, trimming surrounding whitespace", () => {
    expect(fromUsd("0.1")).toBe(100_000_000n);
    expect(fromUsd("12")).toBe(12_000_000_000n);
    expect(fromUsd(" 3.000000007 ")).toBe(3_000_000_007n);
  });

  it("reads amounts with more digits than a double holds when given as a string", () => {
    expect(fromUsd("123456789012.123456789")).toBe(123_456_789_012_123_456_789n);
  });

  it("reads negative amounts", () => {
    expect(fromUsd(-0.1)).toBe(-100_000_000n);
    expect(fromUsd("-2.5")).toBe(-2_500_000_000n);
  });

  it("rounds half up at the tenth decimal", () => {
    expect(fromUsd("0.0000000015")).toBe(2n);
    expect(fromUsd("0.0000000014999")).toBe(1n);
    expect(fromUsd("0.0000000004")).toBe(0n);
    expect(fromUsd("0.0000000005")).toBe(1n);
  });

  it("carries a rounded-up tenth decimal into the dollars", () => {
    expect(fromUsd("0.9999999995")).toBe(1_000_000_000n);
  });

  it("rounds negative amounts away from zero symmetrically", () => {
    expect(fromUsd("-0.0000000015")).toBe(-2n);
  });

  it("rounds a tiny number written in exponent form by its value", () => {
    expect(fromUsd(4.5e-10)).toBe(0n);
    expect(fromUsd(5.5e-10)).toBe(1n);
  });

  it.each([["abc"], [""], ["  "], ["1.2.3"], ["1e5"], ["$1"], ["1,5"], [".5"], ["+1"], ["0x10"]])(
    "rejects the garbage string %j",
    (text) => {
      expect(() => fromUsd(text)).toThrow(RangeError);
    },
  );

  it.each([[Number.NaN], [Number.POSITIVE_INFINITY], [Number.NEGATIVE_INFINITY]])("rejects the number %p", (x) => {
    expect(() => fromUsd(x)).toThrow(RangeError);
  });
});

describe("toUsd", () => {
  it("gives the decimal amount as a number", () => {
    expect(toUsd(100_000_000n)).toBe(0.1);
    expect(toUsd(1n)).toBe(1e-9);
    expect(toUsd(0n)).toBe(0);
    expect(toUsd(-2_500_000_000n)).toBe(-2.5);
  });

  it("prints as the exact decimal without binary noise", () => {
    // Adding whole and fraction as floats gave 18.848450798000002 here.
    expect(JSON.stringify(toUsd(18_848_450_798n))).toBe("18.848450798");
    expect(JSON.stringify(toUsd(53_967_415_870n))).toBe("53.96741587");
  });

  it("round trips through fromUsd for amounts across the supported range", () => {
    const samples = [
      1n,
      999_999_999n,
      1_000_000_001n,
      18_848_450_798n,
      994_463_922_642n,
      123_456_789_123_456n,
      5_119_566_625_630_626n,
      8_000_000_000_000_001n,
    ];
    // A deterministic spread of amounts (a linear congruential walk) rather than a random one.
    let x = 12_345n;
    for (let i = 0; i < 2_000; i++) {
      x = (x * 6_364_136_223_846_793_005n + 1_442_695_040_888_963_407n) % 2n ** 64n;
      samples.push(x % 8_000_000_000_000_000n);
    }
    for (const n of samples) {
      expect(fromUsd(toUsd(n))).toBe(n);
      expect(fromUsd(toUsd(-n))).toBe(-n);
    }
  });

  it("round trips through JSON text", () => {
    const n = 7_654_321_987n;
    expect(fromUsd(JSON.parse(JSON.stringify({ usd: toUsd(n) })).usd as number)).toBe(n);
  });
});

describe("nanodollar column and field helpers", () => {
  it("normalises pg strings, PGlite numbers, bigints and null", () => {
    expect(toNanos("9007199254740993")).toBe(9_007_199_254_740_993n);
    expect(toNanos(42)).toBe(42n);
    expect(toNanos(7n)).toBe(7n);
    expect(toNanos(null)).toBe(0n);
    expect(toNanos(undefined)).toBe(0n);
  });

  it("writes nanodollar fields as strings and keeps null", () => {
    expect(nanosString(9_007_199_254_740_993n)).toBe("9007199254740993");
    expect(nanosString(null)).toBeNull();
    expect(nanosString(undefined)).toBeNull();
  });

  it("takes the largest amount, never below zero", () => {
    expect(maxNanos(3n, 9n, 4n)).toBe(9n);
    expect(maxNanos(-5n)).toBe(0n);
  });
});

describe("usdDecimal", () => {
  it.each([
    [0n, "0"],
    [450n, "0.00000045"],
    [4_500n, "0.0000045"],
    [1_500_000_000n, "1.5"],
    [12_000_000_000n, "12"],
    [123_456_789_012n, "123.456789012"],
    [-1_500_000_000n, "-1.5"],
    [-1n, "-0.000000001"],
  ])("writes %p nanodollars as %p USD, exactly and never in exponent form", (nanos, text) => {
    expect(usdDecimal(nanos)).toBe(text);
  });

  it("reads back through fromUsd to the same nanodollars", () => {
    for (const n of [1n, 999_999_999n, 1_000_000_001n, 98_765_432_123_456_789n]) expect(fromUsd(usdDecimal(n))).toBe(n);
  });
});

describe("basisPointsOf", () => {
  it("takes basis points of an amount, rounded up to a whole nanodollar", () => {
    expect(basisPointsOf(150_000_000n, 1000)).toBe(15_000_000n);
    expect(basisPointsOf(1n, 500)).toBe(1n);
    expect(basisPointsOf(19_999n, 1)).toBe(2n);
    expect(basisPointsOf(10n, 10_000)).toBe(10n);
  });

  it("is 0 for no amount, a negative one or no basis points, and refuses fractional or negative basis points", () => {
    expect(basisPointsOf(0n, 500)).toBe(0n);
    expect(basisPointsOf(-5n, 500)).toBe(0n);
    expect(basisPointsOf(1_000n, 0)).toBe(0n);
    expect(() => basisPointsOf(1_000n, 1.5)).toThrow(RangeError);
    expect(() => basisPointsOf(1_000n, -1)).toThrow(RangeError);
  });
});
