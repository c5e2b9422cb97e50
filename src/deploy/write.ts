/**
 * `node dist/src/deploy/write.js`: writes deploy/endpoint-operator.yaml from the default values and
 * the Helm chart's crds/ (Helm installs those files verbatim, so they are copies of crds/), and
 * deploy/argocd/argocd-cm-health.yaml from the Argo CD health scripts.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { crdFileName, crdFor, crdYaml } from '../api/crd/generate.js';
import { allKinds } from '../api/kinds.js';
import { ARGOCD_CM_FILE, argocdCmYaml } from './argocd-health.js';
import { deployYaml } from './manifests.js';
import { DEFAULT_DEPLOY_VALUES } from './values.js';

export const DEPLOY_FILE = 'deploy/endpoint-operator.yaml';
export const CHART_CRDS_DIR = 'charts/endpoint-operator/crds';

export async function writeDeploy(root = '.'): Promise<string[]> {
  const deployPath = resolve(root, DEPLOY_FILE);
  await mkdir(dirname(deployPath), { recursive: true });
  await writeFile(deployPath, deployYaml(DEFAULT_DEPLOY_VALUES));
  const crdDir = resolve(root, CHART_CRDS_DIR);
  await mkdir(crdDir, { recursive: true });
  const written = [deployPath];
  for (const def of allKinds) {
    const path = join(crdDir, crdFileName(def));
    await writeFile(path, crdYaml(crdFor(def)));
    written.push(path);
  }
  const argocdPath = resolve(root, ARGOCD_CM_FILE);
  await writeFile(argocdPath, await argocdCmYaml(root));
  written.push(argocdPath);
  return written;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  for (const path of await writeDeploy(process.argv[2])) console.log(`wrote ${path}`);
}
