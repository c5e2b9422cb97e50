import { join } from 'node:path';
import { isRecord } from '../../src/api/common/text.js';
import { expandPaths, parseManifests, readSource } from '../../src/manifests/load.js';
import { packageRoot } from '../host/paths.js';
import type { KubeObject } from '../../src/kube/kube-client.js';

/** `examples/valid/` of this checkout or package (dev/environment → ../../examples; dist/dev/environment → ../../../examples). */
export function defaultExamplesDir(): string {
  return join(packageRoot(), 'examples', 'valid');
}

/** Every object in the example files, in file order, namespaces first (an apply order kubectl would also manage). */
export async function loadExampleObjects(dir: string): Promise<KubeObject[]> {
  const objects: KubeObject[] = [];
  for (const file of await expandPaths([dir])) {
    for (const doc of parseManifests(file, await readSource(file))) {
      const o = doc.object;
      if (isRecord(o) && typeof o.kind === 'string' && typeof o.apiVersion === 'string' && isRecord(o.metadata))
        objects.push(o as unknown as KubeObject);
    }
  }
  return objects.sort((a, b) => Number(b.kind === 'Namespace') - Number(a.kind === 'Namespace'));
}
