/** The model servers' Python base is cached by its recipe, as the stand-in is: any change builds a new one. */
import { describe, expect, it } from 'vitest';
import { PYTHON_BASE_RECIPE, PYTHON_BASE_REPOSITORY, pythonBaseTag } from '../../../../dev/image/python-base.js';
import { standInTag } from '../../../../dev/image/stand-in-base.js';

describe('pythonBaseTag', () => {
  it('names the Python and Debian suite, is stable for one recipe, and is not the stand-in', () => {
    expect(pythonBaseTag()).toMatch(new RegExp(`^${PYTHON_BASE_REPOSITORY}:3\\.11-bookworm-[0-9a-f]{12}$`));
    expect(pythonBaseTag({ ...PYTHON_BASE_RECIPE })).toBe(pythonBaseTag());
    expect(pythonBaseTag()).not.toBe(standInTag());
  });

  it('changes with any part of the recipe', () => {
    const tags = new Set([
      pythonBaseTag(),
      pythonBaseTag({ ...PYTHON_BASE_RECIPE, include: ['python3-minimal'] } as unknown as typeof PYTHON_BASE_RECIPE),
      pythonBaseTag({ ...PYTHON_BASE_RECIPE, layout: 99 } as unknown as typeof PYTHON_BASE_RECIPE),
      pythonBaseTag({ ...PYTHON_BASE_RECIPE, keep: ['python3'] } as unknown as typeof PYTHON_BASE_RECIPE),
    ]);
    expect(tags.size).toBe(4);
  });
});
