/**
 * One container of the image, started with podman from a plan derived from a Deployment
 * (test/support/pod-to-podman.ts): waits on the Deployment's own readiness probe, stops as the kubelet
 * does (SIGTERM, SIGKILL after the grace period), and reports the exit code podman recorded.
 */
import { podman, podmanOk, PODMAN_ULIMITS } from '../../../src/image/podman.js';
import type { PodmanRunPlan } from '../../support/pod-to-podman.js';

export interface StopResult {
  readonly exitCode: number;
  readonly seconds: number;
}

export class ImageContainer {
  private constructor(
    readonly name: string,
    readonly plan: PodmanRunPlan,
  ) {}

  static async start(name: string, plan: PodmanRunPlan): Promise<ImageContainer> {
    // A container of this name left by an earlier, killed run.
    await podman(['rm', '--force', '--time', '0', name]);
    await podmanOk(['run', ...PODMAN_ULIMITS, ...plan.runArgs]);
    return new ImageContainer(name, plan);
  }

  port(name: string): number {
    const port = this.plan.ports.get(name);
    if (port === undefined) throw new Error(`${this.name} has no port named ${name}`);
    return port;
  }

  async running(): Promise<boolean> {
    const r = await podman(['inspect', '--format', '{{.State.Running}}', this.name]);
    return r.code === 0 && r.stdout.trim() === 'true';
  }

  async logs(): Promise<string> {
    const r = await podman(['logs', this.name]);
    return `${r.stdout}${r.stderr}`;
  }

  async logTail(lines = 30): Promise<string> {
    return (await this.logs()).trimEnd().split('\n').slice(-lines).join('\n');
  }

  /** Polls the readiness probe's URL until it answers 200, failing early with the log when the container exited. */
  async waitReady(timeoutMs = 90_000): Promise<void> {
    const url = this.plan.readinessUrl;
    if (url === undefined) throw new Error(`${this.name} has no HTTP readiness probe`);
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      try {
        const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
        if (res.status === 200) return;
      } catch {
        // not listening yet
      }
      if (!(await this.running())) throw new Error(`${this.name} exited before it was ready:\n${await this.logTail()}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    throw new Error(`${this.name} not ready at ${url} within ${timeoutMs} ms:\n${await this.logTail()}`);
  }

  /** `podman stop` with the pod's grace period: SIGTERM, then SIGKILL when it is over. */
  async stop(): Promise<StopResult> {
    const started = Date.now();
    await podmanOk(['stop', '--time', String(this.plan.graceSeconds), this.name]);
    const seconds = (Date.now() - started) / 1000;
    const exitCode = Number(await podmanOk(['inspect', '--format', '{{.State.ExitCode}}', this.name]));
    return { exitCode, seconds };
  }

  async exec(args: readonly string[]): Promise<{ code: number; output: string }> {
    const r = await podman(['exec', this.name, ...args]);
    return { code: r.code, output: `${r.stdout}${r.stderr}` };
  }

  async remove(): Promise<void> {
    await podman(['rm', '--force', '--time', '0', this.name]);
  }
}
