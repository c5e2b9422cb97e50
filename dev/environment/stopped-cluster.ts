/**
 * `dev` prints `export KUBECONFIG=<its cluster's kubeconfig>`; a person who pastes it, stops `dev` and starts it
 * again in the same shell would have `dev` use that stopped cluster, whose kubeconfig went with it. A KUBECONFIG
 * from the environment that names only such files (a control plane's own data dir under the temporary
 * directory, now missing) is read as "no cluster chosen": `dev` starts a new one and says why. `--kubeconfig`
 * on the command line always means the cluster named, and fails plainly when it is gone.
 */
import { isAbsolute, relative, sep } from 'node:path';
import { DATA_DIR_PREFIX } from '../cluster/control-plane.js';

export interface KubeconfigChoice {
  /** The value of `--kubeconfig` or KUBECONFIG, as the flags read it. */
  readonly kubeconfig: string | undefined;
  /** Whether `--kubeconfig` was given on the command line (else the value, if any, came from KUBECONFIG). */
  readonly fromCommandLine: boolean;
  /** The machine's temporary directory (os.tmpdir()), where control planes make their data dirs. */
  readonly tmp: string;
  readonly exists: (path: string) => boolean;
}

/** Whether `path` is the kubeconfig in a control plane's own data dir (`<tmp>/eo-control-plane-…/kubeconfig`). */
function isDevKubeconfig(path: string, tmp: string): boolean {
  const rel = relative(tmp, path);
  if (rel.startsWith('..') || isAbsolute(rel)) return false;
  const parts = rel.split(sep);
  return parts.length === 2 && (parts[0] ?? '').startsWith(DATA_DIR_PREFIX) && parts[1] === 'kubeconfig';
}

/**
 * The line `dev` says when KUBECONFIG names a cluster that `dev` started and has since stopped (then it starts
 * a new one); undefined when the value is to be used as given.
 */
export function stoppedDevCluster(choice: KubeconfigChoice): string | undefined {
  const { kubeconfig, tmp } = choice;
  if (kubeconfig === undefined || choice.fromCommandLine) return undefined;
  // KUBECONFIG may list several files (kubectl's `:`-separated form).
  const files = kubeconfig.split(':').filter((f) => f !== '');
  if (files.length === 0 || !files.every((f) => isDevKubeconfig(f, tmp) && !choice.exists(f))) return undefined;
  return `KUBECONFIG=${kubeconfig} names a local cluster that dev started and has stopped: starting a new one (unset KUBECONFIG to stop this note; --kubeconfig PATH names a cluster to use)`;
}

/** `--kubeconfig` given on the command line, in either form. */
export function kubeconfigOnCommandLine(argv: readonly string[]): boolean {
  return argv.some((a) => a === '--kubeconfig' || a.startsWith('--kubeconfig='));
}
