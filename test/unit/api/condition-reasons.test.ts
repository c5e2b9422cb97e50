import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { KIND_REASONS, REASON_READY, REASONS_PREFIX, Reasons, type ConditionKind } from '../../../src/api/common/conditions.js';

const root = join(import.meta.dirname, '..', '..', '..');
const kinds = Object.keys(KIND_REASONS) as ConditionKind[];
const sorted = (xs: Iterable<string>): string[] => [...xs].sort();

/** The README's troubleshooting table as rows of [kinds, Ready, reason]. */
function readmeRows(): Array<{ kinds: string[]; ready: string; reason: string }> {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('### Troubleshooting: condition reasons'));
  const lines = section.split('\n').filter((l) => l.startsWith('| ')).slice(1); // drop the header row
  const end = lines.findIndex((l) => !/^\| [^|]+ \| (True|False|Unknown) \| `/.test(l));
  return (end < 0 ? lines : lines.slice(0, end)).map((l) => {
    const [kindCell = '', ready = '', reasonCell = ''] = l.split('|').slice(1).map((c) => c.trim());
    const listed = kindCell === 'all' ? kinds.filter((k) => KIND_REASONS[k].length > 0) : kindCell.split(', ');
    return { kinds: listed, ready, reason: reasonCell.replace(/`/g, '') };
  });
}

describe('the Ready reason catalogue', () => {
  it('README troubleshooting table lists exactly each kind\'s reasons, with their Ready status', () => {
    const rows = readmeRows();
    expect(rows.length).toBeGreaterThan(10);
    const byKind = new Map<string, Set<string>>(kinds.map((k) => [k, new Set()]));
    for (const row of rows) {
      expect(REASON_READY[row.reason as keyof typeof REASON_READY], `README row ${row.reason}`).toBe(row.ready);
      for (const k of row.kinds) {
        expect(byKind.has(k), `README names unknown kind ${k}`).toBe(true);
        byKind.get(k)?.add(row.reason);
      }
    }
    for (const k of kinds) expect(sorted(byKind.get(k) ?? []), k).toEqual(sorted(KIND_REASONS[k]));
    // Every reason of the catalogue is used by some kind (no dead entries).
    expect(sorted(new Set(kinds.flatMap((k) => [...KIND_REASONS[k]])))).toEqual(sorted(Object.values(Reasons)));
  });

  it('every CRD version describes status.conditions with exactly its kind\'s reasons', () => {
    const files = readdirSync(join(root, 'crds')).filter((f) => f.endsWith('.yaml'));
    let checked = 0;
    for (const file of files) {
      const crd = yaml.load(readFileSync(join(root, 'crds', file), 'utf8')) as {
        spec: { names: { kind: ConditionKind }; versions: Array<{ name: string; schema: { openAPIV3Schema: { properties: { status?: { properties: { conditions?: { description: string } } } } } } }> };
      };
      const kind = crd.spec.names.kind;
      for (const v of crd.spec.versions) {
        const description = v.schema.openAPIV3Schema.properties.status?.properties.conditions?.description ?? '';
        const at = description.indexOf(REASONS_PREFIX);
        const listed = at < 0 ? [] : (description.slice(at + REASONS_PREFIX.length).split(';')[0] ?? '').split(', ');
        expect(sorted(listed), `${file} ${v.name}`).toEqual(sorted(KIND_REASONS[kind]));
        checked++;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(kinds.length);
  });
});
