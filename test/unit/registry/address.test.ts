import { isIP } from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addressProblem, isIpAddress, MAX_ADDRESS_LENGTH } from '../../../src/api/registry/address.js';

describe('addressProblem', () => {
  it.each(['8.8.8.8', '0.0.0.0', '255.255.255.255', '10.0.0.5', '::', '::1', '2001:db8::5', '2001:DB8:0:0:0:0:0:5', 'fe80::1', '::ffff:192.0.2.1', '64:ff9b::192.0.2.33', '1:2:3:4:5:6:7:8', '1::', 'ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255'])(
    'accepts %s',
    (address) => {
      expect(addressProblem(address)).toBeUndefined();
    },
  );

  it.each([
    ['8.8.8', /exactly 4 decimal octets/],
    ['8.8.8.8:53', /without a port/],
    ['test:bad:address', /IPv6 group "test"/],
    ['[::1]', /without URL brackets/],
    ['[::1]:8080', /brackets and a port/],
    ['fe80::1%eth0', /zone index/],
    ['010.1.1.1', /leading zero/],
    ['10.0.0.05', /leading zero/],
    ['::ffff:01.2.3.4', /leading zero/],
    ['256.1.1.1', /greater than 255/],
    ['1.2.3.4.5', /exactly 4/],
    ['1..2.3', /empty octets/],
    ['10.0.0.0/8', /CIDR/],
    ['1::2::3', /only once/],
    ['1:2:3:4:5:6:7', /exactly 8/],
    ['1:2:3:4:5:6:7:8:9', /exactly 8/],
    ['1:2:3:4::5:6:7:8', /at most 7/],
    ['12345::1', /1 to 4 hexadecimal digits/],
    ['1.2.3.4::', /1 to 4 hexadecimal digits/],
    ['1.2.3.4:5:6:7:8:9:10:11', /hexadecimal/],
    [':1::', /empty groups/],
    ['example.com', /host names are not accepted/],
    ['localhost', /host names/],
    [' 8.8.8.8', /host names/],
  ])('rejects %s', (address, reason) => {
    expect(addressProblem(address)).toMatch(reason);
  });

  it(`rejects more than ${MAX_ADDRESS_LENGTH} characters even when the text is otherwise an address`, () => {
    const long = '0000:0000:0000:0000:0000:0000:255.255.255.255';
    expect(long.length).toBe(45);
    expect(addressProblem(long)).toBeUndefined();
    expect(addressProblem(`0${long}`)).toMatch(/at most 45 characters/);
  });

  it('accepts every address fast-check generates', () => {
    fc.assert(
      fc.property(fc.oneof(fc.ipV4(), fc.ipV6()), (address) => {
        expect(addressProblem(address), address).toBeUndefined();
      }),
      { numRuns: 2000 },
    );
  });

  it("agrees with Node's parser (which also refuses leading zeros) on strings of address characters", () => {
    // Node accepts zone indexes; ours never does, so '%' is left out of the alphabet.
    const text = fc.string({ unit: fc.constantFrom(...'0123456789abcdefABCDEF:.'.split('')), maxLength: 45 });
    const nearMiss = fc.tuple(fc.oneof(fc.ipV4(), fc.ipV6()), fc.nat(44), fc.constantFrom('', ':', '.', '0', '::', 'f')).map(([a, i, s]) => (a.slice(0, i) + s + a.slice(i)).slice(0, 45));
    fc.assert(
      fc.property(fc.oneof(text, nearMiss), (address) => {
        expect(isIpAddress(address), address).toBe(isIP(address) !== 0);
      }),
      { numRuns: 5000 },
    );
  });
});
