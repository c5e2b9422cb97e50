import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DATA_DIR_PREFIX } from '../../../../dev/cluster/control-plane.js';
import { kubeconfigOnCommandLine, stoppedDevCluster } from '../../../../dev/environment/stopped-cluster.js';

const tmp = '/tmp';
const gone = join(tmp, `${DATA_DIR_PREFIX}Ab12cd`, 'kubeconfig');
const alive = join(tmp, `${DATA_DIR_PREFIX}Zz99yy`, 'kubeconfig');
const exists = (p: string): boolean => p === alive || p === '/home/me/.kube/config';
const choice = (kubeconfig: string | undefined, fromCommandLine = false) => ({
  kubeconfig,
  fromCommandLine,
  tmp,
  exists,
});

describe("dev's kubeconfig: a stopped dev cluster in KUBECONFIG", () => {
  it('starts a new cluster, in one line, when KUBECONFIG names only the kubeconfig of a dev cluster that stopped', () => {
    const line = stoppedDevCluster(choice(gone));
    expect(line).toBe(
      `KUBECONFIG=${gone} names a local cluster that dev started and has stopped: starting a new one (unset KUBECONFIG to stop this note; --kubeconfig PATH names a cluster to use)`,
    );
    expect(line?.includes('\n')).toBe(false);
    expect(stoppedDevCluster(choice(`${gone}:${join(tmp, `${DATA_DIR_PREFIX}x`, 'kubeconfig')}`))).toBeDefined();
  });

  it('uses KUBECONFIG as given otherwise: a running dev cluster, a cluster of its own, or a missing file elsewhere', () => {
    expect(stoppedDevCluster(choice(alive))).toBeUndefined();
    expect(stoppedDevCluster(choice('/home/me/.kube/config'))).toBeUndefined();
    // Not dev's: the user meant it, and the client's error says it is missing.
    expect(stoppedDevCluster(choice('/home/me/.kube/gone'))).toBeUndefined();
    expect(stoppedDevCluster(choice(join(tmp, 'other-dir', 'kubeconfig')))).toBeUndefined();
    expect(stoppedDevCluster(choice(join(tmp, `${DATA_DIR_PREFIX}x`, 'pki', 'kubeconfig')))).toBeUndefined();
    // One stopped, one real: the real one is meant.
    expect(stoppedDevCluster(choice(`${gone}:/home/me/.kube/config`))).toBeUndefined();
    expect(stoppedDevCluster(choice(undefined))).toBeUndefined();
  });

  it('keeps --kubeconfig for a cluster the user really means, even a stopped dev one', () => {
    expect(stoppedDevCluster(choice(gone, true))).toBeUndefined();
    expect(kubeconfigOnCommandLine(['--kubeconfig', gone])).toBe(true);
    expect(kubeconfigOnCommandLine([`--kubeconfig=${gone}`])).toBe(true);
    expect(kubeconfigOnCommandLine(['--real-node', '--namespace', 'x'])).toBe(false);
  });
});
