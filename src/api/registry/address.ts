import { codePointLength } from '../common/text.js';

/**
 * Endpoint addresses as Service Directory accepts them: a bare IPv4 or IPv6 address and nothing
 * else. Anything a client would have to strip first (a port, URL brackets, a zone index, a prefix
 * length) is refused, so that every consumer can hand `address` to a socket call unchanged.
 */

/** Service Directory's limit: the longest IPv6 text form (`ffff:…:ffff:255.255.255.255`) is 45 characters. */
export const MAX_ADDRESS_LENGTH = 45;

/**
 * Characters that can occur in an address (hex digits, `:` and `.`). Used as the CRD `pattern`
 * so the apiserver itself refuses the grossest mistakes; the full check is `addressProblem`.
 */
export const ADDRESS_CHARSET_PATTERN = /^[0-9A-Fa-f:.]*$/;

const DECIMAL_OCTET = /^(0|[1-9][0-9]{0,2})$/;
const HEX_GROUP = /^[0-9A-Fa-f]{1,4}$/;

/**
 * Why `octets` is not a dotted-quad IPv4 address, or undefined when it is. Leading zeros are refused
 * because inet_aton and many resolvers read `010` as octal 8 while others read decimal 10
 * (the reason Go 1.17 and Node 17 stopped accepting them).
 */
function ipv4Problem(text: string): string | undefined {
  const octets = text.split('.');
  if (octets.length !== 4)
    return `an IPv4 address has exactly 4 decimal octets separated by '.' (found ${octets.length})`;
  for (const octet of octets) {
    if (octet === '') return 'an IPv4 address has no empty octets';
    if (!/^[0-9]+$/.test(octet)) return `IPv4 octet ${JSON.stringify(octet)} is not a decimal number`;
    if (!DECIMAL_OCTET.test(octet))
      return `IPv4 octet ${JSON.stringify(octet)} has a leading zero (ambiguous: some parsers read it as octal)`;
    if (Number(octet) > 255) return `IPv4 octet ${octet} is greater than 255`;
  }
  return undefined;
}

/** Why `text` is not an IPv6 address in RFC 4291 §2.2 text form, or undefined when it is. */
function ipv6Problem(text: string): string | undefined {
  const halves = text.split('::');
  if (halves.length > 2) return "an IPv6 address may use '::' only once";
  const parse = (part: string): string[] => (part === '' ? [] : part.split(':'));
  const head = parse(halves[0] ?? '');
  const tail = halves.length === 2 ? parse(halves[1] ?? '') : [];
  const groups = [...head, ...tail];
  let units = 0;
  for (const [i, group] of groups.entries()) {
    // RFC 4291 §2.2 (3): the low-order 32 bits may be written as a dotted-quad IPv4 address, so only
    // as the last group of the text (not before a trailing '::').
    const endsText = i === groups.length - 1 && (halves.length === 1 || tail.length > 0);
    if (endsText && group.includes('.')) {
      const v4 = ipv4Problem(group);
      if (v4 !== undefined) return `the embedded IPv4 part is invalid: ${v4}`;
      units += 2;
      continue;
    }
    if (group === '') return "an IPv6 address has no empty groups except one '::'";
    if (!HEX_GROUP.test(group)) return `IPv6 group ${JSON.stringify(group)} must be 1 to 4 hexadecimal digits`;
    units += 1;
  }
  if (halves.length === 2) {
    if (units > 7) return "an IPv6 address with '::' has at most 7 other 16-bit groups";
  } else if (units !== 8) {
    return `an IPv6 address without '::' has exactly 8 16-bit groups (found ${units})`;
  }
  return undefined;
}

/**
 * Why `address` is not a bare IPv4 or IPv6 address of at most 45 characters, or undefined when it is.
 * The empty string is not an address; whether an empty `address` is allowed is the caller's rule.
 */
export function addressProblem(address: string): string | undefined {
  const length = codePointLength(address);
  if (length > MAX_ADDRESS_LENGTH) return `${length} characters; at most ${MAX_ADDRESS_LENGTH}`;
  const character = characterProblem(address);
  if (character !== undefined) return character;
  if (address.startsWith('[')) {
    return address.includes(']:')
      ? 'must be a bare IP address: brackets and a port are URL syntax (put the port in spec.port)'
      : 'must be a bare IP address without URL brackets (write ::1, not [::1])';
  }
  if (address.includes('%'))
    return 'must be a bare IP address without a zone index (%eth0): zones are local to one host';
  if (address.includes('/')) return 'must be a single IP address, not a CIDR prefix';
  if (address.includes(':')) {
    const problem = ipv6Problem(address);
    if (problem === undefined) return undefined;
    // `8.8.8.8:53`: an IPv4 address with a port, the commonest mistake.
    const lastColon = address.lastIndexOf(':');
    if (address.indexOf(':') === lastColon && ipv4Problem(address.slice(0, lastColon)) === undefined) {
      return 'must be a bare IP address without a port (put the port in spec.port)';
    }
    return `must be a bare IPv4 or IPv6 address: ${problem}`;
  }
  const hex = address.split('.').find((octet) => /^0[xX][0-9A-Fa-f]*$/.test(octet));
  if (hex !== undefined) {
    const value = hex.length > 2 ? ` (${hex} is ${Number.parseInt(hex.slice(2), 16)})` : '';
    return `must be a bare IPv4 address in dotted decimal: IPv4 octet ${JSON.stringify(hex)} is hexadecimal; write each octet in decimal${value}`;
  }
  if (/^[0-9.]*$/.test(address)) {
    const problem = ipv4Problem(address);
    return problem === undefined ? undefined : `must be a bare IPv4 or IPv6 address: ${problem}`;
  }
  if (/^[A-Za-z0-9.-]+$/.test(address) && /[A-Za-z]/.test(address)) {
    return 'must be a bare IPv4 or IPv6 address such as 10.0.0.5 or 2001:db8::5, not a host name (resolve it first)';
  }
  return `must be a bare IPv4 or IPv6 address such as 10.0.0.5 or 2001:db8::5: ${JSON.stringify(firstOutside(address))} cannot occur in one`;
}

/** Characters that are never part of an address and deserve their own words: whitespace, non-ASCII. */
function characterProblem(address: string): string | undefined {
  let position = 0;
  for (const c of address) {
    position++;
    if (/\s/u.test(c)) {
      const name = WHITESPACE_NAMES[c] ?? `whitespace (U+${hex4(c)})`;
      return `must not contain whitespace: found ${name} at character ${position}${position === 1 || position === codePointLength(address) ? ' (leading and trailing whitespace is not trimmed)' : ''}`;
    }
    if (c > '\u007f') {
      const kind = /\p{Nd}/u.test(c) ? 'non-ASCII digit' : 'non-ASCII character';
      return `must be written in ASCII: found the ${kind} ${JSON.stringify(c)} (U+${hex4(c)}) at character ${position}${kind === 'non-ASCII digit' ? '; write the digits 0-9' : ''}`;
    }
  }
  return undefined;
}

const WHITESPACE_NAMES: Record<string, string> = {
  ' ': 'a space',
  '\t': 'a tab',
  '\n': 'a line break',
  '\r': 'a carriage return',
};

function hex4(c: string): string {
  return (c.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0');
}

function firstOutside(address: string): string {
  return /[^0-9A-Fa-f:.]/.exec(address)?.[0] ?? address;
}

/** True for a bare IPv4 or IPv6 address of at most 45 characters. */
export function isIpAddress(address: string): boolean {
  return addressProblem(address) === undefined;
}
