/**
 * The `--key` option of `ratewarden replay` and `suggest`: what a request is keyed by
 * ({@link parseKeyOption}).
 *
 * - `ip/N`: the client address through the library's `ipKey` with `ipv6Subnet: N` (1 to 128), as
 *   the middlewares key requests: IPv6 addresses grouped by their `/N` network, every spelling of
 *   an address (and IPv4-mapped IPv6) as one key. `ip/64` ({@link DEFAULT_KEY}) is the default,
 *   as it is the middlewares'.
 * - `ip`: the client address as the log writes it (distinct bytes, distinct keys).
 * - `user`: the authenticated user (CLF's `%u`, the third field; `-` when there is none, which
 *   is then one key shared by every anonymous request).
 * - `field:PATH`: a field of a JSON-lines log, a dotted path such as `field:request.client_ip`.
 *
 * @module
 */

/** What a request is keyed by: the parsed `--key` option. */
export type KeyChoice =
  | { readonly kind: 'ip'; readonly ipv6Subnet?: number | undefined }
  | { readonly kind: 'user' }
  | { readonly kind: 'field'; readonly path: string };

/**
 * The IPv6 prefix length of the default key, `ip/64`: the middlewares' default (`ipKey` without
 * `ipv6Subnet` groups IPv6 addresses by /64).
 */
export const DEFAULT_IPV6_SUBNET = 64;

/** The key when `--key` is not given: `ip/64`, as the middlewares key requests. */
export const DEFAULT_KEY: KeyChoice = { kind: 'ip', ipv6Subnet: DEFAULT_IPV6_SUBNET };

/** The kinds of key: `ip` (with or without `/N`), `user`, `field`. */
export type KeyKind = KeyChoice['kind'];

/** What `--key` expects, as the usage errors say it. */
export const KEY_EXPECTED = 'ip/N (N from 1 to 128: IPv6 grouped by /N), ip (addresses as written), user or field:PATH (a JSON field)';

/**
 * The `--key` option's value as a {@link KeyChoice}; {@link DEFAULT_KEY} (`ip/64`) when absent.
 *
 * @returns the choice, or `undefined` when `value` is none of the forms above.
 */
export function parseKeyOption(value: string | undefined): KeyChoice | undefined {
  if (value === undefined) return DEFAULT_KEY;
  if (value === 'ip') return { kind: 'ip' };
  if (value === 'user') return { kind: 'user' };
  const subnet = /^ip\/([0-9]{1,3})$/.exec(value);
  if (subnet !== null) {
    const bits = Number(subnet[1]);
    return bits >= 1 && bits <= 128 ? { kind: 'ip', ipv6Subnet: bits } : undefined;
  }
  if (value.startsWith('field:') && value.length > 'field:'.length) {
    const path = value.slice('field:'.length);
    return path.split('.').every((part) => part.length > 0) ? { kind: 'field', path } : undefined;
  }
  return undefined;
}
