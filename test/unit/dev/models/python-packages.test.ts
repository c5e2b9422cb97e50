/**
 * The committed Python requirement sets: every package pinned and hashed (pip's --require-hashes refuses
 * anything else, and a forgotten dependency would fail with --no-deps), and one scikit-learn for all, so the iris
 * model trained with one set loads in every server.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  PYTHON_PACKAGE_SETS,
  pinnedRequirements,
  pythonRequirementsDir,
  verified,
} from '../../../../dev/models/python-packages.js';

const read = (set: string): Promise<string> =>
  readFile(join(pythonRequirementsDir(set as (typeof PYTHON_PACKAGE_SETS)[number]), 'requirements.txt'), 'utf8');

describe('pinnedRequirements', () => {
  it('reads name==version of each requirement, not of comments or hash lines', () => {
    const text = [
      'joblib==1.6.0 \\',
      '    --hash=sha256:aa',
      '    # via scikit-learn',
      'zope.event==6.2 \\',
      '    --hash=sha256:bb',
      '# pip==99 in a comment',
    ].join('\n');
    expect(pinnedRequirements(text)).toEqual(['joblib==1.6.0', 'zope.event==6.2']);
  });
});

describe.each(PYTHON_PACKAGE_SETS)('tools/python/%s/requirements.txt', (set) => {
  it('pins every requirement with at least one sha256 hash, and points pip at no other index', async () => {
    const text = await read(set);
    const entries = text.split(/\n(?=[A-Za-z0-9])/).filter((e) => /^[A-Za-z0-9]/.test(e));
    expect(entries.length).toBeGreaterThan(10);
    for (const entry of entries) {
      expect(entry, entry).toMatch(/^[A-Za-z0-9][A-Za-z0-9._-]*==\S+ \\\n/);
      expect(entry, entry).toMatch(/--hash=sha256:[0-9a-f]{64}/);
    }
    expect(pinnedRequirements(text)).toHaveLength(entries.length);
    expect(text).not.toMatch(/^\s*-(-index-url|-extra-index-url|-find-links|i|f)\b/m);
  });
});

describe('scikit-learn', () => {
  it('is one version in every set that has it', async () => {
    const pins = new Set<string>();
    for (const set of PYTHON_PACKAGE_SETS)
      for (const pin of pinnedRequirements(await read(set))) if (pin.startsWith('scikit-learn==')) pins.add(pin);
    expect([...pins]).toHaveLength(1);
  });
});

describe('verified', () => {
  it('accepts an install only with its .complete record for the set and every distribution that record lists', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'eo-python-'));
    try {
      expect(await verified(dir, 'mlserver')).toBe(false); // an install that never finished has no record
      for (const dist of ['joblib-1.6.0.dist-info', 'mlserver-1.7.1.dist-info']) {
        await mkdir(join(dir, dist));
        await writeFile(join(dir, dist, 'RECORD'), '');
      }
      const record = { set: 'mlserver', distributions: ['joblib-1.6.0.dist-info', 'mlserver-1.7.1.dist-info'] };
      await writeFile(join(dir, '.complete'), JSON.stringify(record));
      expect(await verified(dir, 'mlserver')).toBe(true);
      expect(await verified(dir, 'kserve')).toBe(false);
      await rm(join(dir, 'mlserver-1.7.1.dist-info'), { recursive: true }); // damaged: reinstalled
      expect(await verified(dir, 'mlserver')).toBe(false);
      await writeFile(join(dir, '.complete'), '{"set": "mlse'); // a torn record
      expect(await verified(dir, 'mlserver')).toBe(false);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
