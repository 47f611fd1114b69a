import { createServer } from "node:net";
import { freePort } from "../src/processes";

describe("freePort", () => {
  it("never hands out one port twice, and stays between fetch's bad ports and the kernel's ephemeral range", async () => {
    const ports: number[] = [];
    for (let i = 0; i < 200; i++) ports.push(await freePort());
    expect(new Set(ports).size).toBe(ports.length);
    for (const port of ports) {
      expect(port).toBeGreaterThan(10_080);
      expect(port).toBeLessThan(32_768);
    }
  });

  it("skips a port something is listening on", async () => {
    const first = await freePort();
    // Occupy the next few ports of the block; none of them may be handed out.
    const taken = await Promise.all(
      [1, 2, 3].map(
        (d) =>
          new Promise<ReturnType<typeof createServer>>((resolve) => {
            const srv = createServer();
            srv.once("error", () => resolve(srv));
            srv.listen(first + d, "127.0.0.1", () => resolve(srv));
          }),
      ),
    );
    try {
      const next = await freePort();
      expect(taken.filter((s) => s.listening).map((s) => (s.address() as { port: number }).port)).not.toContain(next);
    } finally {
      await Promise.all(taken.map((s) => new Promise<void>((r) => (s.listening ? s.close(() => r()) : r()))));
    }
  });
});
