/** Code-unit order, independent of the host locale (localeCompare is not), so sorted status lists are the same on every replica. */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
