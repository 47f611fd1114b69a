import { inWindowAt, type CeilingRule } from "../src/holds/ceilings";

describe("a ceiling placed in its window", () => {
  it("keeps every field of each kind of rule and adds the window that holds the moment", () => {
    const at = new Date("2026-11-18T10:30:00.000Z");
    const rules: CeilingRule[] = [
      { subjectKind: "key", subjectId: "k1", limit: 5n, window: "monthly", hard: false, includeByok: false, subjectName: "ci key" },
      { subjectKind: "workspace", subjectId: "ws_1", limit: 7n, window: "daily", hard: true, includeByok: true },
      { subjectKind: "agent", subjectId: "ws_1/bot", limit: 9n, window: "weekly", hard: true, includeByok: true, subjectName: "bot", workspaceId: "ws_1" },
    ];
    const placed = rules.map((r) => inWindowAt(r, at));
    placed.forEach((p, i) => expect(p).toMatchObject(rules[i]!));
    // No field beyond the rule's and the window's.
    placed.forEach((p, i) => {
      const given = Object.entries(rules[i]!).filter(([, v]) => v !== undefined).map(([k]) => k);
      expect(Object.entries(p).filter(([, v]) => v !== undefined).map(([k]) => k).sort()).toEqual([...given, "windowEnd", "windowStart"].sort());
    });
    expect(placed[1]).toMatchObject({ windowStart: new Date("2026-11-18T00:00:00.000Z"), windowEnd: new Date("2026-11-19T00:00:00.000Z") });
    expect(placed[0]).toMatchObject({ windowStart: new Date("2026-11-01T00:00:00.000Z"), windowEnd: new Date("2026-12-01T00:00:00.000Z") });
  });
});
