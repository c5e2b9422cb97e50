/**
 * The shipped alerts' files as `npm run generate` writes them. Debian's promtool judges the rules
 * (check rules, a firing and a silent case per alert) in test/integration/deploy/alerts.test.ts.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { observabilityFiles } from '../../../src/deploy/write.js';
import { REPO_ROOT } from '../../support/examples.js';

describe('the shipped alerts', () => {
  it('are the committed generated files (npm run generate)', async () => {
    for (const [file, content] of Object.entries(observabilityFiles())) expect(await readFile(join(REPO_ROOT, file), 'utf8'), file).toBe(content);
  });
});
