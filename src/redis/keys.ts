/**
 * The Redis key layout: how a user id becomes (part of) a Redis key, and which part of a key
 * Redis Cluster hashes.
 *
 * @module
 */

/** @internal Percent-encodes `%`, `{`, `}` and lone surrogates, so the hash tag is exactly the id. */
export function escapeKey(key: string): string {
  if (!/[%{}\uD800-\uDFFF]/.test(key)) return key;
  let out = '';
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    if (c === 0x25 || c === 0x7b || c === 0x7d) {
      out += `%${c.toString(16)}`;
    } else if (c >= 0xd800 && c <= 0xdbff && i + 1 < key.length && (key.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      out += key[i] as string;
      out += key[++i] as string;
    } else if (c >= 0xd800 && c <= 0xdfff) {
      out += `%u${c.toString(16)}`;
    } else {
      out += key[i] as string;
    }
  }
  return out;
}

/** @internal Redis Cluster's hash tag of a key: between the first `{` and the next `}`, if not empty. */
export function hashTag(key: string): string {
  const open = key.indexOf('{');
  if (open === -1) return key;
  const close = key.indexOf('}', open + 1);
  return close === -1 || close === open + 1 ? key : key.slice(open + 1, close);
}
