import { truncateText } from './text.js';

/**
 * A Google Cloud project number, as both areas name projects in network names: decimal digits, no
 * leading zero (`0123` is not a number anyone was given, and tools that read it as octal disagree),
 * at most 19 digits (an int64). RE2-compatible, so the CRD patterns carry it too.
 */
export const PROJECT_NUMBER_PATTERN = '[1-9][0-9]{0,18}';

const PROJECT_NUMBER = new RegExp(`^${PROJECT_NUMBER_PATTERN}$`);

export function isProjectNumber(s: string): boolean {
  return PROJECT_NUMBER.test(s);
}

/** Why digits `s` are not a project number, or undefined when they are one (or are not all digits). */
export function projectNumberDigitsProblem(s: string): string | undefined {
  if (!/^[0-9]+$/.test(s)) return undefined;
  if (s.startsWith('0'))
    return `the project number ${JSON.stringify(truncateText(s, 24))} has a leading zero; a project number has none`;
  if (s.length > 19) return `the project number has ${s.length} digits; at most 19`;
  return undefined;
}
