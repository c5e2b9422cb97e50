import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { allKinds } from '../api/kinds.js';
import { crdFileName, crdFor, crdYaml, crdsYaml } from '../api/crd/generate.js';

const HELP = `Usage: endpoint-operator crds [--out-dir DIR]

Prints the CustomResourceDefinitions of every kind as one YAML stream (the same YAML as crds/).

Flags:
  --out-dir DIR   write one file per CRD into DIR (and remove generated files of kinds that no longer exist)
  -h, --help      show this help`;

export async function main(argv: string[]): Promise<number> {
  let values: { 'out-dir'?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: { 'out-dir': { type: 'string' }, help: { type: 'boolean', short: 'h' } },
      strict: true,
    }));
  } catch (err) {
    console.error(`endpoint-operator crds: ${(err as Error).message}\n\n${HELP}`);
    return 2;
  }
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  const outDir = values['out-dir'];
  if (outDir === undefined) {
    process.stdout.write(crdsYaml());
    return 0;
  }
  await mkdir(outDir, { recursive: true });
  const wanted = new Map(allKinds.map((def) => [crdFileName(def), crdYaml(crdFor(def))]));
  for (const existing of await readdir(outDir)) {
    if (existing.endsWith('.yaml') && !wanted.has(existing)) await rm(join(outDir, existing));
  }
  for (const [file, text] of wanted) await writeFile(join(outDir, file), text);
  console.error(`wrote ${wanted.size} CRDs to ${outDir}`);
  return 0;
}
