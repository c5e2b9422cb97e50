/** Which Debian packages the model servers' Python base keeps: the closure of its roots through dpkg's status. */
import { describe, expect, it } from 'vitest';
import { dependencyClosure, parseDpkgStatus } from '../../../../dev/image/debian-closure.js';

const STATUS = `Package: python3
Status: install ok installed
Depends: python3.11 (>= 3.11.2-1~), libpython3-stdlib (= 3.11.2-1+b1)
Pre-Depends: python3-minimal (= 3.11.2-1+b1)

Package: python3.11
Depends: python3.11-minimal (= 3.11.2-6+deb12u6), media-types | mime-support,
 libc6 (>= 2.34)

Package: python3.11-minimal
Pre-Depends: libc6 (>= 2.36)

Package: python3-minimal
Depends: python3.11-minimal

Package: libpython3-stdlib
Depends: libpython3.11-stdlib

Package: libpython3.11-stdlib
Depends: libc6:amd64, awk

Package: media-types

Package: mime-support

Package: mawk
Provides: awk

Package: libc6

Package: perl-base
Depends: libc6

Package: dash
Pre-Depends: libc6 (>= 2.34)
`;

describe('parseDpkgStatus', () => {
  it('reads names, dependencies (continued lines, versions, architectures, alternatives) and Provides', () => {
    const pkgs = parseDpkgStatus(STATUS);
    expect(pkgs.map((p) => p.name)).toHaveLength(12);
    expect(pkgs.find((p) => p.name === 'python3.11')?.depends).toEqual([
      ['python3.11-minimal'],
      ['media-types', 'mime-support'],
      ['libc6'],
    ]);
    expect(pkgs.find((p) => p.name === 'python3')?.depends[0]).toEqual(['python3-minimal']);
    expect(pkgs.find((p) => p.name === 'libpython3.11-stdlib')?.depends).toEqual([['libc6'], ['awk']]);
    expect(pkgs.find((p) => p.name === 'mawk')?.provides).toEqual(['awk']);
  });
});

describe('dependencyClosure', () => {
  const pkgs = parseDpkgStatus(STATUS);

  it('keeps the roots and what they need, the first installed alternative and a virtual package its provider', () => {
    expect([...dependencyClosure(pkgs, ['python3'])].sort()).toEqual([
      'libc6',
      'libpython3-stdlib',
      'libpython3.11-stdlib',
      'mawk',
      'media-types',
      'python3',
      'python3-minimal',
      'python3.11',
      'python3.11-minimal',
    ]);
    expect(dependencyClosure(pkgs, ['python3', 'dash']).has('perl-base')).toBe(false);
  });

  it('refuses a root that is not installed', () => {
    expect(() => dependencyClosure(pkgs, ['python3', 'bash'])).toThrow('bash is not installed in the root filesystem');
  });
});
