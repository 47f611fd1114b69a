/** A sleep that `wake()` cuts short, so loops stop promptly on close or when new work arrives. */
export class Waker {
  private pending: Array<() => void> = [];

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.pending = this.pending.filter((fn) => fn !== done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      this.pending.push(done);
    });
  }

  wake(): void {
    for (const done of [...this.pending]) done();
  }
}
