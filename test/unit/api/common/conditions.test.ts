import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { describe, expect, it } from 'vitest';
import {
  KIND_REASONS,
  PROGRESS_PREFIX,
  REASON_READING,
  REASONS_PREFIX,
  Reasons,
  reasonsSetting,
  type ConditionKind,
  type ProgressCondition,
  type Reason,
} from '../../../../src/api/common/conditions.js';

const root = join(import.meta.dirname, '..', '..', '..', '..');
const kinds = Object.keys(KIND_REASONS) as ConditionKind[];
const sorted = (xs: Iterable<string>): string[] => [...xs].sort();

interface ReadmeRow {
  kinds: string[];
  ready: string;
  reason: string;
  progress: string;
  kstatus: string;
  argo: string;
}

/** The README's troubleshooting table as rows of [kinds, Ready, reason, True condition, kstatus, Argo CD]. */
function readmeRows(): ReadmeRow[] {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('### Troubleshooting: condition reasons'));
  const lines = section
    .split('\n')
    .filter((l) => l.startsWith('| '))
    .slice(1); // drop the header row
  const end = lines.findIndex((l) => !/^\| [^|]+ \| (True|False|Unknown) \| `/.test(l));
  return (end < 0 ? lines : lines.slice(0, end)).map((l) => {
    const [kindCell = '', ready = '', reasonCell = '', progress = '', kstatus = '', argo = ''] = l
      .split('|')
      .slice(1)
      .map((c) => c.trim());
    const listed = kindCell === 'all' ? kinds.filter((k) => KIND_REASONS[k].length > 0) : kindCell.split(', ');
    return { kinds: listed, ready, reason: reasonCell.replace(/`/g, ''), progress, kstatus, argo };
  });
}

/** The comma-separated list after `label` in a description, up to the next `;`. */
function listAfter(description: string, label: string): string[] {
  const at = description.indexOf(label);
  if (at < 0) return [];
  const text = (description.slice(at + label.length).split(';')[0] ?? '').trim();
  return text === 'none' || text === '' ? [] : text.split(', ');
}

describe('the reason catalogue', () => {
  it("README troubleshooting table lists exactly each kind's reasons, with their Ready status, kstatus condition and readings", () => {
    const rows = readmeRows();
    expect(rows.length).toBeGreaterThan(10);
    const byKind = new Map<string, Set<string>>(kinds.map((k) => [k, new Set()]));
    for (const row of rows) {
      const reading = REASON_READING[row.reason as Reason];
      expect(reading, `README row ${row.reason}`).toBeDefined();
      expect(
        { ready: row.ready, progress: row.progress, kstatus: row.kstatus, argo: row.argo },
        `README row ${row.reason}`,
      ).toEqual({
        ready: reading.ready,
        progress: reading.progress ?? '—',
        kstatus: reading.kstatus,
        argo: reading.argo,
      });
      for (const k of row.kinds) {
        expect(byKind.has(k), `README names unknown kind ${k}`).toBe(true);
        byKind.get(k)?.add(row.reason);
      }
    }
    for (const k of kinds) expect(sorted(byKind.get(k) ?? []), k).toEqual(sorted(KIND_REASONS[k]));
    // Every reason of the catalogue is used by some kind (no dead entries).
    expect(sorted(new Set(kinds.flatMap((k) => [...KIND_REASONS[k]])))).toEqual(sorted(Object.values(Reasons)));
  });

  it('the readings agree with each other: Reconciled is the only healthy reason, Stalled is Failed/Degraded, Reconciling is never Failed', () => {
    for (const [reason, r] of Object.entries(REASON_READING)) {
      expect(r.ready === 'True', reason).toBe(reason === Reasons.Reconciled);
      expect(r.progress === undefined, reason).toBe(r.ready === 'True');
      if (r.progress === 'Stalled') expect([r.kstatus, r.argo], reason).toEqual(['Failed', 'Degraded']);
      if (r.progress === 'Reconciling') {
        expect(['InProgress', 'Terminating'], reason).toContain(r.kstatus);
        expect(r.argo, reason).toBe('Progressing');
      }
    }
  });

  it("every CRD version describes status.conditions with exactly its kind's reasons and which are waiting or stuck", () => {
    const files = readdirSync(join(root, 'crds')).filter((f) => f.endsWith('.yaml'));
    let checked = 0;
    for (const file of files) {
      const crd = yaml.load(readFileSync(join(root, 'crds', file), 'utf8')) as {
        spec: {
          names: { kind: ConditionKind };
          versions: Array<{
            name: string;
            schema: {
              openAPIV3Schema: { properties: { status?: { properties: { conditions?: { description: string } } } } };
            };
          }>;
        };
      };
      const kind = crd.spec.names.kind;
      // The bucket map (ModelArtifactBucket) is read, never reconciled: it has no conditions.
      if (KIND_REASONS[kind] === undefined) continue;
      for (const v of crd.spec.versions) {
        const description = v.schema.openAPIV3Schema.properties.status?.properties.conditions?.description ?? '';
        expect(sorted(listAfter(description, REASONS_PREFIX)), `${file} ${v.name}`).toEqual(sorted(KIND_REASONS[kind]));
        for (const p of ['Reconciling', 'Stalled'] as ProgressCondition[]) {
          const expected = KIND_REASONS[kind].length === 0 ? [] : reasonsSetting(kind, p);
          expect(sorted(listAfter(description, PROGRESS_PREFIX[p])), `${file} ${v.name} ${p}`).toEqual(
            sorted(expected),
          );
        }
        checked++;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(kinds.length);
  });
});
