import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../../src/main.js';
import { callMain, type CliResult } from '../../support/cli.js';

const good = `apiVersion: prediction.endpoint-operator.dev/v1
kind: PredictionEndpoint
metadata:
  name: churn
  namespace: team-a
spec:
  displayName: Churn model
`;

const badSplit = `apiVersion: prediction.endpoint-operator.dev/v1
kind: PredictionEndpoint
metadata:
  name: churn-bad
  namespace: team-a
spec:
  displayName: Churn model
  trafficSplit:
    "1": 60
    "2": 30
`;

const configMap = `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: team-a
data: {}
`;

const tempDirs: string[] = [];
afterAll(() => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

function tempFile(name: string, text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'eo-validate-'));
  tempDirs.push(dir);
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

const cli = (args: string[], opts: { input?: string } = {}): Promise<CliResult> => callMain(main, args, opts);

describe('endpoint-operator validate', () => {
  it('prints "Kind namespace/name: ok" and exits 0 when every object is valid', async () => {
    const r = await cli(['validate', '-f', tempFile('ok.yaml', good)]);
    expect(r.stdout).toContain('PredictionEndpoint team-a/churn: ok');
    expect(r.code).toBe(0);
  });

  it('prints one line per error with field, detail and value, and exits 1', async () => {
    const r = await cli(['validate', '-f', tempFile('bad.yaml', `${good}---\n${badSplit}`)]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('PredictionEndpoint team-a/churn: ok');
    expect(r.stdout).toContain('PredictionEndpoint team-a/churn-bad: invalid');
    expect(r.stdout).toMatch(/^ {2}spec\.trafficSplit: .+\(.+\)$/m);
  });

  it('reads stdin with -f - and reports other kinds as skipped', async () => {
    const r = await cli(['validate', '-f', '-'], { input: `${configMap}---\n${good}` });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('ConfigMap team-a/settings: skipped');
  });

  it('writes the JSON contract with -o json', async () => {
    const r = await cli(['validate', '-o', 'json', '-f', tempFile('mixed.yaml', `${badSplit}---\n${configMap}`)]);
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout) as Record<string, unknown>[];
    expect(report).toHaveLength(2);
    expect(report[0]).toMatchObject({
      kind: 'PredictionEndpoint',
      apiVersion: 'prediction.endpoint-operator.dev/v1',
      namespace: 'team-a',
      name: 'churn-bad',
      valid: false,
    });
    // No DeployedModel in the set deploys ids 1 and 2: the manifest-set checks say so.
    expect(report[0]!.warnings).toEqual([
      expect.stringMatching(/^spec\.trafficSplit\[1\]: manifest set: /),
      expect.stringMatching(/^spec\.trafficSplit\[2\]: manifest set: /),
    ]);
    expect(report[0]!.errors).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ field: 'spec.trafficSplit', type: expect.any(String), detail: expect.any(String) }),
      ]),
    );
    expect(report[1]).toMatchObject({ kind: 'ConfigMap', valid: true, skipped: true, errors: [] });
  });

  it('walks directories', async () => {
    const file = tempFile('a.yaml', good);
    writeFileSync(join(file, '..', 'b.yml'), badSplit);
    writeFileSync(join(file, '..', 'notes.txt'), 'not a manifest');
    const r = await cli(['validate', '-f', join(file, '..')]);
    expect(r.code).toBe(1);
    expect(r.stdout.split('\n').filter((l) => /: (ok|invalid)$/.test(l))).toHaveLength(2);
  });

  it('expands kind: List', async () => {
    const list = JSON.stringify({
      apiVersion: 'v1',
      kind: 'List',
      items: [
        {
          apiVersion: 'prediction.endpoint-operator.dev/v1',
          kind: 'PredictionEndpoint',
          metadata: { name: 'a', namespace: 'n' },
          spec: { displayName: 'A' },
        },
      ],
    });
    const r = await cli(['validate', '-f', tempFile('list.json', list)]);
    expect(r.stdout).toContain('PredictionEndpoint n/a: ok');
    expect(r.code).toBe(0);
  });

  it('exits 2 and names the file and line on a YAML syntax error', async () => {
    const file = tempFile('broken.yaml', 'apiVersion: v1\nkind: [ConfigMap\nmetadata: {}\n');
    const r = await cli(['validate', '-f', file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(file);
    expect(r.stderr).toMatch(/line \d+/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('exits 2 with the file and line when nesting is too deep to parse', async () => {
    const file = tempFile(
      'deep.yaml',
      `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deep}\ndata: ${'['.repeat(5000)}${']'.repeat(5000)}\n`,
    );
    const r = await cli(['validate', '-f', file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${file}: nested more than 100 levels deep at line 4`);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('exits 2 on a missing file and on bad usage', async () => {
    const missing = await cli(['validate', '-f', '/nonexistent/x.yaml']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('/nonexistent/x.yaml: no such file or directory');
    expect((await cli(['validate'])).code).toBe(2);
    expect((await cli(['validate', '--bogus'])).code).toBe(2);
    expect((await cli(['validate', '-o', 'xml', '-f', '-'])).code).toBe(2);
  });

  it('reports non-object documents, wrong types, huge strings and deep nesting as errors, never a crash', async () => {
    const huge = 'x'.repeat(1_000_000);
    // js-yaml refuses nesting beyond 100 levels (tested below); 90 levels reach the validators.
    const deep = `${'['.repeat(90)}${']'.repeat(90)}`;
    const docs = [
      '- just\n- a list\n',
      'plain scalar\n',
      `apiVersion: prediction.endpoint-operator.dev/v1\nkind: PredictionEndpoint\nmetadata: {name: wrong-types, namespace: n}\nspec: {displayName: 42, trafficSplit: "50"}\n`,
      `apiVersion: prediction.endpoint-operator.dev/v1\nkind: PredictionEndpoint\nmetadata: {name: huge, namespace: n}\nspec: {displayName: "${huge}"}\n`,
      `apiVersion: prediction.endpoint-operator.dev/v1\nkind: PredictionEndpoint\nmetadata: {name: deep, namespace: n}\nspec: {displayName: ok, labels: ${deep}}\n`,
      'kind: PredictionEndpoint\nmetadata: {name: no-api-version}\n',
      'apiVersion: prediction.endpoint-operator.dev/v9\nkind: PredictionEndpoint\nmetadata: {name: future, namespace: n}\nspec: {}\n',
    ];
    const r = await cli(['validate', '-o', 'json', '-f', tempFile('hostile.yaml', docs.join('---\n'))]);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout) as {
      name: string | null;
      valid: boolean;
      errors: { field: string; value: unknown }[];
    }[];
    expect(report).toHaveLength(docs.length);
    for (const entry of report) {
      expect(entry.valid).toBe(false);
      expect(entry.errors.length).toBeGreaterThan(0);
    }
    expect(r.stdout.length).toBeLessThan(200_000);
    const byName = Object.fromEntries(report.map((e) => [e.name, e.errors.map((x) => x.field)]));
    expect(byName['wrong-types']).toEqual(expect.arrayContaining(['spec.displayName']));
    expect(byName.huge).toEqual(['spec.displayName']);
    expect(byName['no-api-version']).toEqual(['apiVersion']);
    expect(byName.future).toEqual(['apiVersion']);
  });

  const typo = `apiVersion: registry.endpoint-operator.dev/v1
kind: RegistryService
metadata: {name: checkout, namespace: team-a}
spec:
  name: projects/shop-platform/locations/europe-west1/namespaces/payments/services/checkout
  anotations: {team: payments}
`;
  const orphan = `apiVersion: registry.endpoint-operator.dev/v1beta1
kind: RegistryEndpoint
metadata: {name: ledger-1, namespace: team-a}
spec:
  name: projects/shop-platform/locations/europe-west1/namespaces/payments/services/ledger/endpoints/ledger-1
  network: ""
  port: null
`;

  it('warns about a field the version does not have, and refuses it with --strict', async () => {
    const file = tempFile('typo.yaml', typo);
    const warned = await cli(['validate', '-f', file]);
    expect(warned.code).toBe(0);
    expect(warned.stdout).toContain('RegistryService team-a/checkout: ok');
    expect(warned.stdout).toMatch(
      /^ {2}warning: .*typo\.yaml \(document 1\): spec\.anotations: unknown field: .*prunes.*did you mean spec\.annotations\?$/m,
    );
    const strict = await cli(['validate', '--strict', '-f', file]);
    expect(strict.code).toBe(1);
    expect(strict.stdout).toContain('typo.yaml (document 1): RegistryService team-a/checkout: invalid');
    expect(strict.stdout).toMatch(/^ {2}spec\.anotations: unknown field: /m);
  });

  it('checks the files as one manifest set: warnings naming both files and documents, errors with --strict, off with --no-set-checks', async () => {
    const dir = join(tempFile('a.yaml', typo.replace('  anotations: {team: payments}\n', '')), '..');
    writeFileSync(
      join(dir, 'b.yaml'),
      `${orphan}---\n${typo.replace('name: checkout,', 'name: checkout-copy,').replace('  anotations: {team: payments}\n', '')}`,
    );
    const warned = await cli(['validate', '-f', dir]);
    expect(warned.code).toBe(0);
    expect(warned.stdout).toMatch(
      /warning: .*b\.yaml \(document 1\): spec\.name: manifest set: its parent RegistryService .*services\/ledger.* is not in the set/,
    );
    expect(warned.stdout).toMatch(
      /warning: .*b\.yaml \(document 2\): spec\.name: manifest set: RegistryService team-a\/checkout in .*a\.yaml \(document 1\) has the same spec\.name/,
    );
    const strict = await cli(['validate', '--strict', '-o', 'json', '-f', dir]);
    expect(strict.code).toBe(1);
    const report = JSON.parse(strict.stdout) as {
      file: string;
      document: number;
      valid: boolean;
      errors: { field: string; type: string }[];
    }[];
    expect(
      report.map((e) => [
        e.file.replace(/^.*\//, ''),
        e.document,
        e.valid,
        e.errors.map((x) => `${x.field} ${x.type}`),
      ]),
    ).toEqual([
      ['a.yaml', 1, true, []],
      ['b.yaml', 1, false, ['spec.name FieldValueNotFound']],
      ['b.yaml', 2, false, ['spec.name FieldValueDuplicate']],
    ]);
    const partial = await cli(['validate', '--strict', '--no-set-checks', '-f', dir]);
    expect(partial.code).toBe(0);
    expect(partial.stdout).not.toContain('manifest set');
  });

  it('shows a non-finite number as written in YAML, in text and in JSON', async () => {
    const file = tempFile('inf.yaml', orphan.replace('port: null', 'port: .inf'));
    const text = await cli(['validate', '--no-set-checks', '-f', file]);
    expect(text.stdout).toMatch(/^ {2}spec\.port: .*\(\.inf\)$/m);
    const json = await cli(['validate', '--no-set-checks', '-o', 'json', '-f', file]);
    expect((JSON.parse(json.stdout) as { errors: { value: unknown }[] }[])[0]?.errors[0]?.value).toBe('.inf');
  });

  it('cuts a long value in -o json between code points, within its size bound, with its length in characters', async () => {
    const file = tempFile('emoji.yaml', good.replace('Churn model', '🚀'.repeat(3000)));
    const r = await cli(['validate', '--no-set-checks', '-o', 'json', '-f', file]);
    const value = (JSON.parse(r.stdout) as { errors: { detail: string; value: string }[] }[])[0]?.errors[0];
    expect(value?.detail).toBe('3000 characters; at most 128');
    expect(value?.value.length).toBeLessThan(1100);
    expect(value?.value).toMatch(/^🚀+…🚀+ \(3000 characters\)$/u);
  });
});
