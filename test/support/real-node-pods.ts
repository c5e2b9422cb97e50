/**
 * A pod's end on the real node (test/support/real-node.ts) as the kubelet reports it.
 */
import { spawn } from 'node:child_process';
import { testCluster } from './cluster.js';

export interface Termination {
  readonly exitCode: number;
  /** From the pod's deletion to the container's end, as the apiserver and the kubelet recorded them (1 s steps). */
  readonly seconds: number;
  /** The kubelet's reason (`Completed`, `Error`, `OOMKilled`, ...), '' when it gave none. */
  readonly reason: string;
}

/**
 * Resolves when the kubelet reports `container` of pod `namespace/name` terminated (before it deletes the pod
 * object, the kubelet writes the container's final state): its exit code and how long after the pod's deletion
 * it ended. Call it before whatever deletes the pod; `signal` gives up on a pod that was not deleted after all (one
 * of several a scale-down might pick), rejecting with its reason.
 */
export function awaitTermination(
  kubeconfig: string,
  namespace: string,
  name: string,
  container: string,
  timeoutMs = 60_000,
  signal?: AbortSignal,
): Promise<Termination> {
  // deletionTimestamp is when the grace period runs out: the deletion was asked deletionGracePeriodSeconds before.
  const state = `.status.containerStatuses[?(@.name=="${container}")].state.terminated`;
  const path = `{${state}.exitCode} {.metadata.deletionTimestamp} {.metadata.deletionGracePeriodSeconds} {${state}.finishedAt} {${state}.reason}{"\\n"}`;
  const child = spawn(
    testCluster().kubectl,
    ['--kubeconfig', kubeconfig, 'get', 'pod', name, '-n', namespace, '--watch', '-o', `jsonpath=${path}`],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  return new Promise<Termination>((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`pod ${namespace}/${name} did not end within ${timeoutMs} ms: ${err}`));
    }, timeoutMs);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(signal.reason);
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      for (const line of out.split('\n')) {
        const m = /^(\d+) (\S+) (\d+) (\S+) ?(\S*)$/.exec(line.trim());
        if (m === null) continue;
        clearTimeout(timer);
        child.kill('SIGKILL');
        const deleted = Date.parse(m[2] ?? '') - Number(m[3]) * 1000;
        resolve({ exitCode: Number(m[1]), seconds: (Date.parse(m[4] ?? '') - deleted) / 1000, reason: m[5] ?? '' });
        return;
      }
    });
  });
}
