/**
 * The gRPC descriptors are generated (npm run generate): compiled by buf from the protos Google's client packages
 * ship. Regenerating them from the installed packages must give the committed file, so a client upgrade that
 * changes a message cannot leave the gateway serving the old one unnoticed.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DESCRIPTORS_FILE, descriptorsModule } from '../../../src/gateway/grpc/write-descriptors.js';
import { REPO_ROOT } from '../../support/examples.js';

describe('the gateway gRPC descriptors', () => {
  it('are what npm run generate compiles from the installed protos', async () => {
    const committed = await readFile(join(REPO_ROOT, DESCRIPTORS_FILE), 'utf8');
    expect(await descriptorsModule(REPO_ROOT)).toBe(committed);
  }, 120_000);
});
