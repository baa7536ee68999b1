/**
 * The contract every access-log format of the replay follows ({@link LineFormat}): a
 * byte-level parser of one line that leaves the request's time and the bytes of its key in its
 * fields, allocating nothing on the hot path; and {@link decodeKeyBytes}, how the collector turns
 * those bytes into the key string, so that distinct bytes are always distinct keys.
 *
 * The formats: `clf.ts` (NCSA Common/Combined Log Format), `json-lines.ts` (one JSON object per
 * line: nginx `escape=json`, Caddy), `alb.ts` (AWS Application Load Balancer), each with its
 * entry in `registry.ts`.
 *
 * @module
 */

import { isUtf8 } from 'node:buffer';

/** The names of the formats, as `--format` takes them: the registry's (`registry.ts`). */
export type { FormatName } from './registry.js';

/**
 * A parser of one access-log line. One instance is reused for every line of an input; its fields
 * hold the result of the last {@link parse}.
 */
export interface LineFormat {
  /** The format's name, as `--format` takes it (its entry's in the registry). */
  readonly name: string;
  /**
   * What the key is, for the report: `client address`, `authenticated user`,
   * `JSON field request.client_ip`.
   */
  readonly keyLabel: string;
  /**
   * What the time is, for the report: `[timestamp]` (CLF), `request_creation_time` (ALB),
   * `JSON field ts (auto)`.
   */
  readonly timeLabel: string;
  /**
   * Parses the line in `bytes[start, end)` (without its `\n`; a trailing `\r` is ignored). The
   * result depends on those bytes only: nothing at or after `end` counts.
   *
   * @returns whether the line is a request; its time is then in {@link timeMs} and its key in
   *   `bytes[keyStart, keyEnd)`, otherwise a short reason is in {@link reason}.
   */
  parse(bytes: Uint8Array, start: number, end: number): boolean;
  /**
   * After a successful {@link parse}: the request time in **milliseconds** since
   * 1970-01-01T00:00:00Z, a whole number (finer precision is floored to the millisecond), zone
   * offset applied.
   */
  timeMs: number;
  /** After a successful {@link parse}: where the key's bytes start. */
  keyStart: number;
  /** After a successful {@link parse}: where the key's bytes end (exclusive). */
  keyEnd: number;
  /**
   * After a successful {@link parse}: `true` when the key's bytes are the body of a JSON string
   * holding backslash escapes, to be decoded as JSON; `false` when the bytes are the key as they
   * are (decoded by {@link decodeKeyBytes}).
   */
  keyEscaped: boolean;
  /**
   * After a failed {@link parse}: a short reason, such as `"bad timestamp"` or `"no field ts"`
   * (a constant string: nothing is allocated for a malformed line).
   */
  reason: string;
}

/**
 * `bytes[start, end)` as a key, so that distinct bytes are distinct keys: Latin-1 (one byte, one
 * character) when it is ASCII; UTF-8 when it is valid UTF-8; otherwise {@link decodeBytes}
 * (each byte that is not part of a valid UTF-8 sequence as a lone surrogate), never U+FFFD, which
 * would merge every invalid byte into one key.
 */
export function decodeKeyBytes(bytes: Buffer, start: number, end: number): string {
  let high = 0;
  for (let i = start; i < end; i++) high |= bytes[i] as number;
  if (high < 0x80) return bytes.toString('latin1', start, end);
  return isUtf8(bytes.subarray(start, end)) ? bytes.toString('utf8', start, end) : decodeBytes(bytes, start, end);
}

/**
 * The body of a JSON string, `bytes[start, end)` without its quotes, holding backslash escapes,
 * as the string it stands for (`JSON.parse` decodes it). Its raw bytes, by
 * {@link decodeKeyBytes}, if it is not a valid JSON string body after all.
 */
export function decodeJsonStringBody(bytes: Buffer, start: number, end: number): string {
  const body = decodeKeyBytes(bytes, start, end);
  try {
    return JSON.parse(`"${body}"`) as string;
  } catch {
    return body;
  }
}

/**
 * `bytes[start, end)` as a string that keeps every byte: valid UTF-8 sequences as the characters
 * they encode, and each other byte `0xHH` (always `0x80`–`0xFF`) as the lone low surrogate
 * `U+DCHH`, as Python's `surrogateescape` error handler does (PEP 383). Injective: valid UTF-8
 * never decodes to a lone surrogate, and a string so decoded gives back its bytes, so distinct
 * byte strings give distinct strings. `escapeText` prints such a byte as `\udcHH`, and
 * `JSON.stringify` writes it as the same escape.
 */
export function decodeBytes(bytes: Buffer, start: number, end: number): string {
  let out = '';
  /** The start of the current run of valid UTF-8, decoded at once when it ends. */
  let run = start;
  let i = start;
  while (i < end) {
    const b0 = bytes[i] as number;
    if (b0 < 0x80) {
      i++;
      continue;
    }
    // The length of a well-formed sequence led by b0, and the range its second byte must be in
    // (Unicode §3.9, Table 3-7: no overlong forms, no surrogates, nothing above U+10FFFF).
    let length = 0;
    let low = 0x80;
    let high = 0xbf;
    if (b0 >= 0xc2 && b0 <= 0xdf) length = 2;
    else if (b0 >= 0xe0 && b0 <= 0xef) {
      length = 3;
      if (b0 === 0xe0) low = 0xa0;
      else if (b0 === 0xed) high = 0x9f;
    } else if (b0 >= 0xf0 && b0 <= 0xf4) {
      length = 4;
      if (b0 === 0xf0) low = 0x90;
      else if (b0 === 0xf4) high = 0x8f;
    }
    let valid = length > 0 && i + length <= end;
    for (let k = 1; valid && k < length; k++) {
      const b = bytes[i + k] as number;
      valid = k === 1 ? b >= low && b <= high : b >= 0x80 && b <= 0xbf;
    }
    if (valid) {
      i += length;
    } else {
      if (run < i) out += bytes.toString('utf8', run, i);
      out += String.fromCharCode(0xdc00 | b0);
      run = ++i;
    }
  }
  return run < end ? out + bytes.toString('utf8', run, end) : out;
}
