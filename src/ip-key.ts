/**
 * The rate-limit key of a client address ({@link ipKey}): IPv6 addresses grouped by network
 * prefix, IPv4-mapped IPv6 addresses as the IPv4 address they carry, every spelling of one
 * address as one key. Used by the default key of `ratewarden/express` and `ratewarden/fastify`.
 *
 * A small parser of its own rather than a dependency: the core ships with none, and the grammar
 * (RFC 4291 §2.2 text forms, RFC 5952 canonical output) is short. It is tested against
 * ipaddr.js.
 *
 * @module
 */
import { checkKnownKeys, isObject, knownOptions, rangeError, typeError } from './errors.js';

/** Options of {@link ipKey}. */
export interface IpKeyOptions {
  /**
   * The length, in bits, of the IPv6 prefix that makes one key: every address in one
   * `/ipv6Subnet` network shares the key (and so the limit). An integer from 1 to 128; `128` or
   * `false` keys each IPv6 address on its own. IPv4 addresses are always keyed one by one.
   *
   * A /64 is the smallest network an ISP normally gives a home line or a server (RFC 6177),
   * and one host can pick any of its 2^64 addresses: keyed per address, it gets a fresh limit
   * per request. Some ISPs hand out a /56 or a /48 per customer; a shorter prefix (48–56)
   * holds those to one limit too, at the risk of grouping neighbours.
   * @default 64
   */
  readonly ipv6Subnet?: number | false;
}

/** The keys of {@link IpKeyOptions}, checked by {@link ipKey}. */
const IP_KEY_OPTIONS = knownOptions('ipKey options', { ipv6Subnet: true } satisfies Record<keyof IpKeyOptions, true>);

/** The default {@link IpKeyOptions.ipv6Subnet}: one /64 network per key. */
export const DEFAULT_IPV6_SUBNET = 64;

/**
 * The rate-limit key of a client address, for a custom `key` function that falls back to the
 * address (`key: (req) => req.get('x-api-key') ?? ipKey(req.ip ?? 'unknown')`):
 *
 * - **IPv4** (`198.51.100.7`): the address itself, in dotted-decimal form.
 * - **IPv4-mapped IPv6** (`::ffff:198.51.100.7`, or in hex `::ffff:c633:6407`, as a dual-stack
 *   socket reports IPv4 clients): the IPv4 address it carries (`198.51.100.7`), so the two forms
 *   of one client share one key.
 * - **IPv6** (`2001:DB8:1:2::1`): the network of its first `ipv6Subnet` bits, in canonical
 *   RFC 5952 text with the prefix length (`2001:db8:1:2::/64`); with `ipv6Subnet` 128 or
 *   `false`, the whole address in canonical text (`2001:db8:1:2::1`). Every spelling (upper or
 *   lower case, leading zeros, `::` anywhere it may go, an embedded dotted IPv4 tail) gives the
 *   same key. A zone index (`fe80::1%eth0`) is dropped: it names an interface of this host, not
 *   the client.
 * - **Anything else** (a host name, `unknown`, an address with a port or in brackets, an IPv4
 *   address with leading zeros, as a misconfigured proxy may forward): returned unchanged, so
 *   such requests are still limited, one key per distinct string. It never throws for a string.
 *
 * IPv4 keys contain no `:`, IPv6 keys always do: the two never collide.
 *
 * @param address - the client address, such as Express's `req.ip` or Fastify's `request.ip`.
 * @param options - {@link IpKeyOptions}.
 * @returns the key: a non-empty string.
 * @throws {RateWardenTypeError} when `address` is not a string, `options` is not an object or
 *   `undefined`, `options` has a key other than `ipv6Subnet` (code `UnknownOption`, naming the
 *   key and, when one is close, the option meant), or `ipv6Subnet` is neither a number nor
 *   `false`.
 * @throws {RateWardenRangeError} when `address` is empty, or `ipv6Subnet` is not an integer
 *   from 1 to 128.
 *
 * @example
 * ```ts
 * ipKey('2001:db8:1:2:ffff:ffff:ffff:ffff'); // '2001:db8:1:2::/64'
 * ipKey('2001:db8:1:2::1', { ipv6Subnet: 56 }); // '2001:db8:1::/56'
 * ipKey('::ffff:198.51.100.7'); // '198.51.100.7'
 * ```
 */
export function ipKey(address: string, options?: IpKeyOptions): string {
  if (options !== undefined) {
    if (!isObject(options)) throw typeError('options', 'an object or undefined', options);
    checkKnownKeys(options, IP_KEY_OPTIONS);
  }
  const prefix = checkIpv6Subnet('ipv6Subnet', options?.ipv6Subnet);
  if (typeof address !== 'string') throw typeError('address', 'a string (a client IP address)', address);
  if (address.length === 0) throw rangeError('address', 'a non-empty string (a client IP address)', address);
  return keyOf(address, prefix);
}

/**
 * @internal Checks an `ipv6Subnet` option; returns the prefix length (128 for `false`).
 * @throws {RateWardenTypeError} when it is neither undefined, a number nor `false`.
 * @throws {RateWardenRangeError} when it is a number but not an integer from 1 to 128.
 */
export function checkIpv6Subnet(name: string, value: unknown): number {
  if (value === undefined) return DEFAULT_IPV6_SUBNET;
  if (value === false) return 128;
  const expected = 'an integer prefix length from 1 to 128, or false';
  if (typeof value !== 'number') throw typeError(name, expected, value);
  if (!Number.isInteger(value) || value < 1 || value > 128) throw rangeError(name, expected, value);
  return value;
}

/** @internal The key of a non-empty `address` under a checked prefix length (1 to 128). */
export function keyOf(address: string, prefix: number): string {
  const zone = address.indexOf('%');
  // A zone index is at least one character, after an IPv6 address, with no second `%` (as
  // ipaddr.js reads addresses: `::%%0` is no address, and is used as it is).
  const text =
    zone === -1 ? address : zone > 0 && zone < address.length - 1 && !address.includes('%', zone + 1) ? address.slice(0, zone) : '';
  if (!text.includes(':')) {
    if (zone !== -1) return address;
    return parseIPv4(text) === undefined ? address : text;
  }
  const groups = parseIPv6(text);
  if (groups === undefined) return address;
  // ::ffff:0:0/96, the IPv4-mapped addresses (RFC 4291 §2.5.5.2): the IPv4 client itself.
  if (groups[5] === 0xffff && groups.slice(0, 5).every((g) => g === 0)) {
    const high = groups[6] as number;
    const low = groups[7] as number;
    return `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
  }
  if (prefix === 128) return format(groups);
  for (let i = 0; i < 8; i++) {
    const kept = prefix - 16 * i;
    if (kept <= 0) groups[i] = 0;
    else if (kept < 16) groups[i] = (groups[i] as number) & ((0xffff << (16 - kept)) & 0xffff);
  }
  return `${format(groups)}/${prefix}`;
}

const OCTET = '(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])';
/** Dotted-decimal IPv4, four octets without leading zeros (which some parsers read as octal). */
const IPV4 = new RegExp(`^${OCTET}\\.${OCTET}\\.${OCTET}\\.${OCTET}$`);
const HEX_GROUP = /^[0-9a-fA-F]{1,4}$/;

/** The four octets of a dotted-decimal IPv4 address, or `undefined`. */
function parseIPv4(text: string): number[] | undefined {
  return IPV4.test(text) ? text.split('.').map(Number) : undefined;
}

/**
 * The eight 16-bit groups of an IPv6 address in RFC 4291 §2.2 text form (hex groups of 1–4
 * digits, at most one `::` standing for one or more zero groups, optionally a dotted IPv4 tail
 * as the last 32 bits), or `undefined`.
 */
function parseIPv6(text: string): number[] | undefined {
  let hex = text;
  const lastColon = text.lastIndexOf(':');
  if (text.includes('.', lastColon)) {
    const octets = parseIPv4(text.slice(lastColon + 1));
    if (octets === undefined) return undefined;
    const [a, b, c, d] = octets as [number, number, number, number];
    hex = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = hex.split('::');
  if (halves.length > 2) return undefined;
  const head = halves[0] === '' ? [] : (halves[0] as string).split(':');
  const tail = halves.length === 1 || halves[1] === '' ? [] : (halves[1] as string).split(':');
  const count = head.length + tail.length;
  if (halves.length === 1 ? count !== 8 : count > 7) return undefined;
  const groups: number[] = [];
  for (const group of head) {
    if (!HEX_GROUP.test(group)) return undefined;
    groups.push(parseInt(group, 16));
  }
  for (let i = count; i < 8; i++) groups.push(0);
  for (const group of tail) {
    if (!HEX_GROUP.test(group)) return undefined;
    groups.push(parseInt(group, 16));
  }
  return groups;
}

/**
 * RFC 5952 §4 text of eight groups: lower case, no leading zeros, the longest run of two or more
 * zero groups (the first of equal runs) as `::`.
 */
function format(groups: readonly number[]): string {
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart === -1) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLength).join(':')}`;
}
