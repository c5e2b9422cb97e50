/**
 * Graceful shutdown on SIGTERM/SIGINT: the kubelet sends SIGTERM and waits
 * `terminationGracePeriodSeconds` (30 s by default) before SIGKILL, so each step is bounded
 * and the whole sequence finishes well inside it. Order matters: stop taking work, drain
 * in-flight reconciles, release the lease (so the standby takes over at once), close servers.
 */
import { silentLogger, type Logger } from '../base/logger.js';

export interface ShutdownStep {
  readonly name: string;
  /** Gets at most `timeoutMs` (default: the remaining budget); a failure is logged and the next step runs. */
  readonly run: () => Promise<unknown>;
  readonly timeoutMs?: number;
}

export interface ShutdownOptions {
  readonly logger?: Logger;
  /** Total budget; default 25 s. */
  readonly timeoutMs?: number;
  /** Default `process.exit`; tests inject their own. */
  readonly exit?: (code: number) => void;
  readonly signals?: readonly NodeJS.Signals[];
}

export class Shutdown {
  private readonly controller = new AbortController();
  private readonly steps: ShutdownStep[] = [];
  private readonly log: Logger;
  private running: Promise<void> | undefined;
  private readonly handler = (sig: NodeJS.Signals): void => {
    this.log.info({ signal: sig }, 'shutting down');
    void this.run(0);
  };

  constructor(private readonly options: ShutdownOptions = {}) {
    this.log = options.logger ?? silentLogger;
  }

  /** Aborted as soon as shutdown begins: pass it to informers, controllers, the elector. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Steps run in the order added. */
  addStep(step: ShutdownStep): void {
    this.steps.push(step);
  }

  /** Installs the signal handlers. */
  install(): this {
    for (const s of this.options.signals ?? ['SIGTERM', 'SIGINT']) process.once(s, this.handler);
    return this;
  }

  uninstall(): void {
    for (const s of this.options.signals ?? ['SIGTERM', 'SIGINT']) process.off(s, this.handler);
  }

  /** Runs the shutdown once (later calls share it) and exits with `code`. */
  run(code = 0): Promise<void> {
    this.running ??= this.sequence(code);
    return this.running;
  }

  private async sequence(code: number): Promise<void> {
    this.controller.abort();
    const budget = this.options.timeoutMs ?? 25_000;
    const deadline = Date.now() + budget;
    for (const step of this.steps) {
      const remaining = Math.max(0, deadline - Date.now());
      const limit = Math.min(step.timeoutMs ?? remaining, remaining);
      let timer: NodeJS.Timeout | undefined;
      try {
        const outcome = await Promise.race([
          step.run().then(() => 'done' as const),
          new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), limit))),
        ]);
        if (outcome === 'timeout') this.log.warn({ step: step.name, timeoutMs: limit }, 'shutdown step timed out');
      } catch (err) {
        this.log.error(
          { step: step.name, err: err instanceof Error ? err.message : String(err) },
          'shutdown step failed',
        );
      } finally {
        clearTimeout(timer);
      }
    }
    this.uninstall();
    this.log.info('shutdown complete');
    (this.options.exit ?? ((c: number) => process.exit(c)))(code);
  }
}
