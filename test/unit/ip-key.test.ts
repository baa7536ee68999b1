// ipKey: the rate-limit key of a client address. Tables for the forms an address can take, and
// properties against ipaddr.js (a well-kept parser, used here as the reference model only).
import fc from 'fast-check';
import ipaddr from 'ipaddr.js';
import { describe, expect, it } from 'vitest';
import { ipKey } from '../../src/index.js';
import { exactly } from '../support/errors.js';

describe('one IPv6 network is one key, and an IPv4 client has one key in every form', () => {
  it('groups the issue\'s addresses of one /64 and maps ::ffff:a.b.c.d to IPv4', () => {
    expect(ipKey('2001:db8:1:2::1')).toBe('2001:db8:1:2::/64');
    expect(ipKey('2001:db8:1:2::2')).toBe('2001:db8:1:2::/64');
    expect(ipKey('2001:db8:1:2:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64');
    expect(ipKey('::ffff:198.51.100.7')).toBe('198.51.100.7');
    expect(ipKey('::ffff:c633:6407')).toBe('198.51.100.7');
    expect(ipKey('0:0:0:0:0:FFFF:C633:6407')).toBe('198.51.100.7');
    expect(ipKey('198.51.100.7')).toBe('198.51.100.7');
  });

  it.each([
    // [input, ipv6Subnet, key]
    ['2001:DB8:0001:0002:0000:0000:0000:0001', 64, '2001:db8:1:2::/64'],
    ['2001:db8:1:2:3:4:5:6', 48, '2001:db8:1::/48'],
    ['2001:db8:1:2ff:3:4:5:6', 56, '2001:db8:1:200::/56'],
    ['2001:db8:1:2ff:3:4:5:6', 1, '::/1'],
    ['ffff:db8:1:2ff:3:4:5:6', 1, '8000::/1'],
    ['2001:db8:1:2:3:4:5:6', 127, '2001:db8:1:2:3:4:5:6/127'],
    ['2001:db8:1:2:3:4:5:7', 127, '2001:db8:1:2:3:4:5:6/127'],
    ['2001:db8:1:2:3:4:5:7', 128, '2001:db8:1:2:3:4:5:7'],
    ['2001:db8:1:2:3:4:5:7', false, '2001:db8:1:2:3:4:5:7'],
    ['2001:db8::1', false, '2001:db8::1'],
    ['2001:0db8:0000:0000:0000:0000:0000:0001', false, '2001:db8::1'],
    // RFC 5952: the longest zero run, the first of equal runs, never one lone zero group.
    ['2001:0:0:1:0:0:0:1', false, '2001:0:0:1::1'],
    ['2001:db8:0:0:1:0:0:1', false, '2001:db8::1:0:0:1'],
    ['2001:db8:0:1:1:1:1:1', false, '2001:db8:0:1:1:1:1:1'],
    ['1:2:3:4:5:6:7::', false, '1:2:3:4:5:6:7:0'],
    ['::', false, '::'],
    ['::', 64, '::/64'],
    ['::1', false, '::1'],
    // A zone index names this host's interface: dropped.
    ['fe80::1%eth0', 64, 'fe80::/64'],
    ['FE80::1%25', false, 'fe80::1'],
    // A dotted IPv4 tail is just another spelling of the last 32 bits.
    ['1:2:3:4:5:6:1.2.3.4', false, '1:2:3:4:5:6:102:304'],
    ['::1.2.3.4', false, '::102:304'],
    ['::ffff:1.2.3.4%eth0', 64, '1.2.3.4'],
    ['::FFFF:0.0.0.0', 64, '0.0.0.0'],
    ['0.0.0.0', 64, '0.0.0.0'],
    ['255.255.255.255', 64, '255.255.255.255'],
  ] as const)('%s with ipv6Subnet %s is %s', (input, ipv6Subnet, key) => {
    expect(ipKey(input, { ipv6Subnet })).toBe(key);
  });

  it.each([
    'unknown', 'localhost', '1.2.3.4:8080', '[::1]', '[::1]:443', '01.2.3.4', '1.2.3', '1.2.3.4.5', '256.1.1.1',
    '1.2.3.-4', ' 1.2.3.4', '1.2.3.4 ', '1::2::3', ':::', ':1::2', '1:::2', '12345::', 'g::1', '1:2:3:4:5:6:7:8:9',
    '1:2:3:4:5:6:7', '1:2:3:4:5:6:7::8', '::ffff:1.2.3.04', '::ffff:1.2.3', '1.2.3.4::', 'fe80::1%', '%eth0',
    '1.2.3.4%eth0', '::1%', '2001:db8::/64', '::ffff:1.2.3.4:5',
  ])('passes %j through unchanged: not an IP address (a misconfigured proxy)', (input) => {
    expect(ipKey(input)).toBe(input);
  });

  it('rejects a non-string or empty address and a bad ipv6Subnet, naming them', () => {
    expect(() => ipKey(undefined as unknown as string)).toThrow(exactly(TypeError, 'Expected `address` to be a string (a client IP address), got `undefined` (undefined)'));
    expect(() => ipKey(1 as unknown as string)).toThrow(TypeError);
    expect(() => ipKey('')).toThrow(exactly(RangeError, 'Expected `address` to be a non-empty string (a client IP address), got `""` (string)'));
    const range = 'an integer prefix length from 1 to 128, or false';
    for (const bad of [0, 129, 64.5, -1, NaN, Infinity]) {
      expect(() => ipKey('::1', { ipv6Subnet: bad })).toThrow(exactly(RangeError, `Expected \`ipv6Subnet\` to be ${range}, got \`${String(bad)}\` (number)`));
    }
    for (const bad of ['64', true, null, {}]) {
      expect(() => ipKey('::1', { ipv6Subnet: bad as unknown as number })).toThrow(TypeError);
    }
    expect(() => ipKey('::1', 'x' as unknown as object)).toThrow(exactly(TypeError, 'Expected `options` to be an object or undefined, got `"x"` (string)'));
    // Options are checked even for an IPv4 address, whose key does not use them.
    expect(() => ipKey('1.2.3.4', { ipv6Subnet: 0 })).toThrow(RangeError);
  });
});

// ---- properties -------------------------------------------------------------------------------

/** Eight 16-bit groups, biased towards zeros (so that `::` runs and mapped prefixes occur). */
const groupsArb = fc.array(fc.oneof(fc.constant(0), fc.constant(0xffff), fc.integer({ min: 0, max: 0xffff })), {
  minLength: 8,
  maxLength: 8,
});
const prefixArb = fc.integer({ min: 1, max: 128 });

/** Whether the groups are an IPv4-mapped address, ::ffff:0:0/96. */
const isMapped = (g: readonly number[]): boolean => g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff;

/** The key ipaddr.js gives: the reference model. */
function modelKey(groups: readonly number[], prefix: number): string {
  const full = groups.map((g) => g.toString(16)).join(':');
  const address = ipaddr.IPv6.parse(full);
  if (address.isIPv4MappedAddress()) return address.toIPv4Address().toString();
  if (prefix === 128) return address.toRFC5952String();
  return `${ipaddr.IPv6.networkAddressFromCIDR(`${full}/${prefix}`).toRFC5952String()}/${prefix}`;
}

/**
 * An arbitrary RFC 4291 spelling of the groups: random case, optional leading zeros, any run of
 * zero groups (even one) as `::`, the last 32 bits in dotted form, a zone index.
 */
const spellingArb = (groups: readonly number[]): fc.Arbitrary<string> =>
  fc
    .record({
      upper: fc.boolean(),
      pad: fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 8, maxLength: 8 }),
      run: fc.tuple(fc.nat(7), fc.nat(8)),
      dotted: fc.boolean(),
      zone: fc.option(fc.constantFrom('eth0', 'en1', '25', 'lo', 'wlan0'), { nil: undefined }),
    })
    .map(({ upper, pad, run, dotted, zone }) => {
      let parts = groups.map((g, i) => {
        const hex = g.toString(16);
        const padded = '0'.repeat(Math.min(pad[i] as number, 4 - hex.length)) + hex;
        return upper ? padded.toUpperCase() : padded;
      });
      if (dotted) {
        const [high, low] = [groups[6] as number, groups[7] as number];
        parts = [...parts.slice(0, 6), `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`];
      }
      // Compress groups [start, end) if they are all zero (and not the dotted tail).
      const [start, length] = run;
      const end = Math.min(start + Math.max(length, 1), dotted ? 6 : 8);
      let text: string;
      if (start < end && groups.slice(start, end).every((g) => g === 0)) {
        text = `${parts.slice(0, start).join(':')}::${parts.slice(end).join(':')}`;
      } else {
        text = parts.join(':');
      }
      return zone === undefined ? text : `${text}%${zone}`;
    });

describe('ipKey agrees with ipaddr.js on every spelling of every address', () => {
  it('gives the model\'s key (RFC 5952 network/prefix, or the IPv4 of a mapped address)', () => {
    fc.assert(
      fc.property(
        groupsArb.chain((groups) => fc.tuple(fc.constant(groups), spellingArb(groups), prefixArb)),
        ([groups, spelled, prefix]) => {
          expect(ipaddr.isValid(spelled.replace(/%.*/, ''))).toBe(true);
          expect(ipKey(spelled, { ipv6Subnet: prefix })).toBe(modelKey(groups, prefix));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('every address of one /64 has one key; addresses of different /64s have different keys', () => {
    const network = fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 4, maxLength: 4 });
    const host = fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 4, maxLength: 4 });
    fc.assert(
      fc.property(network, network, host, host, (n1, n2, h1, h2) => {
        const a = [...n1, ...h1];
        const b = [...n1, ...h2];
        const c = [...n2, ...h2];
        fc.pre(!isMapped(a) && !isMapped(b) && !isMapped(c));
        const text = (g: readonly number[]): string => g.map((x) => x.toString(16)).join(':');
        expect(ipKey(text(a))).toBe(ipKey(text(b)));
        if (n1.some((x, i) => x !== n2[i])) expect(ipKey(text(a))).not.toBe(ipKey(text(c)));
        else expect(ipKey(text(a))).toBe(ipKey(text(c)));
      }),
      { numRuns: 1000 },
    );
  });

  it('an IPv4 address and its mapped forms (dotted and hex) have one key, the address; distinct IPv4 addresses have distinct keys', () => {
    const ipv4 = fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 4, maxLength: 4 });
    fc.assert(
      fc.property(ipv4, ipv4, fc.integer({ min: 1, max: 128 }), (a, b, prefix) => {
        const dotted = a.join('.');
        const hex = `::ffff:${((a[0]! << 8) | a[1]!).toString(16)}:${((a[2]! << 8) | a[3]!).toString(16)}`;
        const options = { ipv6Subnet: prefix };
        expect(ipKey(dotted, options)).toBe(dotted);
        expect(ipKey(`::ffff:${dotted}`, options)).toBe(dotted);
        expect(ipKey(hex, options)).toBe(dotted);
        expect(ipKey(hex.toUpperCase(), options)).toBe(dotted);
        expect(ipKey(`0:0:0:0:0:ffff:${dotted}`, options)).toBe(dotted);
        if (a.join('.') !== b.join('.')) expect(ipKey(b.join('.'), options)).not.toBe(dotted);
      }),
      { numRuns: 1000 },
    );
  });

  it('never throws for a string, and changes only strings ipaddr.js accepts as an address', () => {
    const chars = fc.constantFrom(...'0123456789abcdefABCDEFgx:.%[] /-'.split(''));
    const text = fc.oneof(fc.string(), fc.string({ unit: chars, minLength: 1, maxLength: 45 }));
    fc.assert(
      fc.property(text, prefixArb, (input, prefix) => {
        fc.pre(input.length > 0);
        const key = ipKey(input, { ipv6Subnet: prefix });
        expect(key.length).toBeGreaterThan(0);
        if (key !== input) expect(ipaddr.isValid(input.replace(/%[^%]+$/, ''))).toBe(true);
      }),
      { numRuns: 3000 },
    );
  });

  it('keeps an address with two zone separators as it is (a seed the property above found)', () => {
    // `::%%0`: ipaddr.js accepts neither `::%` nor a zone index holding `%`; it is no address.
    expect(ipKey('::%%0')).toBe('::%%0');
    expect(ipKey('fe80::1%eth0%1')).toBe('fe80::1%eth0%1');
    expect(ipKey('fe80::1%eth0')).toBe('fe80::/64');
  });
});
