/**
 * What `npm start` stops on the way out, newest first: each step registers how to undo itself as it starts, so a
 * failure half-way stops exactly what had started. A failing stop is reported and the others still run.
 */
export class Teardown {
  private readonly steps: { what: string; stop: () => Promise<void> | void }[] = [];

  constructor(private readonly report: (line: string) => void) {}

  add(what: string, stop: () => Promise<void> | void): void {
    this.steps.push({ what, stop });
  }

  async run(): Promise<void> {
    for (const step of this.steps.splice(0).reverse()) {
      try {
        await step.stop();
      } catch (err) {
        this.report(`stopping ${step.what} failed: ${(err as Error).message}`);
      }
    }
  }
}
