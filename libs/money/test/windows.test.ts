import { ManualClock, systemClock, windowAt, WINDOW_KINDS } from "@router/money";

const at = (iso: string) => new Date(iso);
const span = (kind: Parameters<typeof windowAt>[0], now: string) => {
  const w = windowAt(kind, at(now));
  return { start: w.start.toISOString(), end: w.end?.toISOString() ?? null };
};

describe("windowAt daily", () => {
  it("spans the UTC calendar day containing now", () => {
    expect(span("daily", "2026-03-14T15:09:26.535Z")).toEqual({
      start: "2026-03-14T00:00:00.000Z",
      end: "2026-03-15T00:00:00.000Z",
    });
  });

  it("includes midnight at its start", () => {
    expect(span("daily", "2026-03-14T00:00:00.000Z").start).toBe("2026-03-14T00:00:00.000Z");
  });

  it("puts the last millisecond of a day in that day", () => {
    expect(span("daily", "2026-03-14T23:59:59.999Z").start).toBe("2026-03-14T00:00:00.000Z");
  });

  it("ends at the next month on the last day of a month", () => {
    expect(span("daily", "2026-04-30T12:00:00.000Z").end).toBe("2026-05-01T00:00:00.000Z");
  });

  it("ends at the next year on 31 December", () => {
    expect(span("daily", "2026-12-31T18:00:00.000Z").end).toBe("2027-01-01T00:00:00.000Z");
  });
});

describe("windowAt weekly", () => {
  it("starts on the Monday of the ISO week", () => {
    // 2026-03-12 is a Thursday.
    expect(span("weekly", "2026-03-12T10:00:00.000Z")).toEqual({
      start: "2026-03-09T00:00:00.000Z",
      end: "2026-03-16T00:00:00.000Z",
    });
  });

  it("starts that same day on a Monday", () => {
    expect(span("weekly", "2026-03-09T00:00:00.000Z").start).toBe("2026-03-09T00:00:00.000Z");
  });

  it("counts Sunday as the last day of the week, not the first", () => {
    expect(span("weekly", "2026-03-15T23:59:59.999Z")).toEqual({
      start: "2026-03-09T00:00:00.000Z",
      end: "2026-03-16T00:00:00.000Z",
    });
  });

  it("reaches back into the previous month", () => {
    // 2026-04-02 is a Thursday; its Monday is 30 March.
    expect(span("weekly", "2026-04-02T08:00:00.000Z")).toEqual({
      start: "2026-03-30T00:00:00.000Z",
      end: "2026-04-06T00:00:00.000Z",
    });
  });

  it("reaches back into the previous year", () => {
    // 2027-01-01 is a Friday; its Monday is 28 December 2026.
    expect(span("weekly", "2027-01-01T12:00:00.000Z")).toEqual({
      start: "2026-12-28T00:00:00.000Z",
      end: "2027-01-04T00:00:00.000Z",
    });
  });

  it("ends in the next year when the week starts in December", () => {
    // 2026-12-31 is a Thursday.
    expect(span("weekly", "2026-12-31T12:00:00.000Z").end).toBe("2027-01-04T00:00:00.000Z");
  });

  it("is always seven days starting on a Monday", () => {
    for (let day = 0; day < 14; day++) {
      const w = windowAt("weekly", new Date(Date.UTC(2026, 1, 20 + day, 13)));
      expect(w.start.getUTCDay()).toBe(1);
      expect(w.end!.getTime() - w.start.getTime()).toBe(7 * 24 * 3600 * 1000);
    }
  });
});

describe("windowAt monthly", () => {
  it("spans the UTC calendar month", () => {
    expect(span("monthly", "2026-03-14T15:00:00.000Z")).toEqual({
      start: "2026-03-01T00:00:00.000Z",
      end: "2026-04-01T00:00:00.000Z",
    });
  });

  it("rolls December into January of the next year", () => {
    expect(span("monthly", "2026-12-31T23:59:59.999Z")).toEqual({
      start: "2026-12-01T00:00:00.000Z",
      end: "2027-01-01T00:00:00.000Z",
    });
  });

  it("covers 29 February in a leap year", () => {
    expect(span("monthly", "2028-02-29T12:00:00.000Z")).toEqual({
      start: "2028-02-01T00:00:00.000Z",
      end: "2028-03-01T00:00:00.000Z",
    });
  });

  it("uses UTC, not local time, at a month boundary", () => {
    // A time that is still in January in any zone west of UTC.
    expect(span("monthly", "2026-02-01T00:30:00.000Z").start).toBe("2026-02-01T00:00:00.000Z");
  });
});

describe("windowAt lifetime", () => {
  it("starts at the epoch and never ends", () => {
    expect(span("lifetime", "2026-03-14T15:00:00.000Z")).toEqual({ start: "1970-01-01T00:00:00.000Z", end: null });
  });
});

it("names every window kind", () => {
  expect([...WINDOW_KINDS]).toEqual(["daily", "weekly", "monthly", "lifetime"]);
});

describe("ManualClock", () => {
  it("reports the time it was given", () => {
    const clock = new ManualClock(at("2026-05-01T00:00:00.000Z"));
    expect(clock.now().toISOString()).toBe("2026-05-01T00:00:00.000Z");
  });

  it("advances by milliseconds", () => {
    const clock = new ManualClock(at("2026-05-01T00:00:00.000Z"));
    clock.advance(61_000);
    expect(clock.now().toISOString()).toBe("2026-05-01T00:01:01.000Z");
  });

  it("jumps to a time that is set", () => {
    const clock = new ManualClock();
    clock.set(at("2027-01-01T00:00:00.000Z"));
    expect(clock.now().toISOString()).toBe("2027-01-01T00:00:00.000Z");
  });

  it("is not moved by mutating a date it returned", () => {
    const clock = new ManualClock(at("2026-05-01T00:00:00.000Z"));
    clock.now().setUTCFullYear(1999);
    expect(clock.now().toISOString()).toBe("2026-05-01T00:00:00.000Z");
  });

  it("is not moved by mutating the date it was constructed with", () => {
    const given = at("2026-05-01T00:00:00.000Z");
    const clock = new ManualClock(given);
    given.setUTCFullYear(2000);
    expect(clock.now().toISOString()).toBe("2026-05-01T00:00:00.000Z");
  });

  it("is not moved by mutating the date it was set to", () => {
    const clock = new ManualClock();
    const later = at("2026-06-01T00:00:00.000Z");
    clock.set(later);
    later.setUTCFullYear(1998);
    expect(clock.now().toISOString()).toBe("2026-06-01T00:00:00.000Z");
  });

  it("stands still until moved", () => {
    const clock = new ManualClock();
    expect(clock.now().getTime()).toBe(clock.now().getTime());
  });
});

it("the system clock reads the current time", () => {
  const before = Date.now();
  const now = systemClock.now().getTime();
  expect(now).toBeGreaterThanOrEqual(before);
  expect(now).toBeLessThanOrEqual(Date.now());
});
