/**
 * A hand-written parser of access-log lines in the NCSA Common and Combined Log Formats.
 *
 * ```text
 * host ident authuser [dd/Mon/yyyy:HH:MM:SS +zzzz] "request" status bytes
 * host ident authuser [dd/Mon/yyyy:HH:MM:SS +zzzz] "request" status bytes "referer" "user-agent"
 * ```
 *
 * The parser works on bytes ({@link ClfFormat}, a {@link LineFormat} used by the replay reader on
 * the chunks it reads) and allocates nothing; {@link parseLogLine} is the same parser behind a
 * string interface, for tests and programmatic use, so the two always agree.
 *
 * What is checked, field by field (fields are separated by exactly one space):
 * - `host`, `ident`, `authuser`: non-empty runs of bytes other than a space. `host` is the key,
 *   or `authuser` (`%u`, `-` when the request was not authenticated) with `key: 'user'`.
 * - the timestamp: exactly `[dd/Mon/yyyy:HH:MM:SS +zzzz]`, where `dd` is a valid day of the month
 *   (`01`–`31`, and no 31 April or 29 February of a common year), `Mon` one of `Jan`…`Dec`
 *   (that case), `yyyy` four digits, `HH < 24`, `MM < 60`, `SS < 61` (a leap second counts as the
 *   next minute's `:00`), and the zone a sign and four digits `HHMM` with `HH < 24`, `MM < 60`.
 * - the request: a double-quoted string, possibly empty, in which a backslash escapes the next
 *   byte (Apache writes a quote as `\"`).
 * - `status`: exactly three digits; `bytes`: one or more digits, or `-`.
 * - after `bytes`: the end of the line, or a space followed by anything (the referer and user
 *   agent of the Combined format, or extra fields some servers append); not parsed.
 *
 * A trailing `\r` (CRLF line ending) is ignored. Nothing else is trimmed.
 *
 * @module
 */

import { daysFromCivil, daysInMonth, monthNumber } from '../calendar.js';
import { decodeKeyBytes, type LineFormat } from './format.js';

const SPACE = 0x20;
const CR = 0x0d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const SLASH = 0x2f;
const COLON = 0x3a;
const PLUS = 0x2b;
const MINUS = 0x2d;
const ZERO = 0x30;

/** Short reasons why a line is malformed, as {@link ClfFormat.reason} gives them. */
export const MALFORMED_REASONS = [
  'none',
  'empty line',
  'no client address',
  'no ident',
  'no authuser',
  'no [timestamp]',
  'bad timestamp',
  'bad day',
  'bad month',
  'bad time of day',
  'bad zone offset',
  'no quoted request',
  'unterminated request',
  'bad status',
  'bad bytes',
] as const;

/** One of {@link MALFORMED_REASONS}. */
export type MalformedReason = (typeof MALFORMED_REASONS)[number];

const R_EMPTY = 1;
const R_HOST = 2;
const R_IDENT = 3;
const R_AUTHUSER = 4;
const R_NO_TIMESTAMP = 5;
const R_TIMESTAMP = 6;
const R_DAY = 7;
const R_MONTH = 8;
const R_TIME = 9;
const R_ZONE = 10;
const R_NO_REQUEST = 11;
const R_UNTERMINATED = 12;
const R_STATUS = 13;
const R_BYTES = 14;

/** What a CLF line is keyed by: the client address (`%h`) or the authenticated user (`%u`). */
export type ClfKey = 'host' | 'user';

/**
 * The byte-level parser of the Common and Combined Log Formats, a {@link LineFormat}:
 * {@link parse} reads one line from a byte range and leaves its results in the parser's fields,
 * allocating nothing. One instance is reused for every line.
 */
export class ClfFormat implements LineFormat {
  readonly name = 'clf';
  readonly keyLabel: string;
  readonly timeLabel = '[timestamp]';
  timeMs = 0;
  keyStart = 0;
  keyEnd = 0;
  readonly keyEscaped = false;
  reason: string = MALFORMED_REASONS[0];
  readonly #user: boolean;

  /**
   * @param key - `"host"` (default): the first field, the client address; `"user"`: the third,
   *   the authenticated user (`-` for every request without one: they share one key).
   */
  constructor(key: ClfKey = 'host') {
    this.#user = key === 'user';
    this.keyLabel = this.#user ? 'authenticated user (%u)' : 'client address';
  }

  /**
   * Parses the line in `bytes[start, end)` (without its `\n`; a trailing `\r` is ignored).
   * The result depends on those bytes only (the search for the request's closing quote may look
   * further, but a quote found at or after `end` does not count).
   *
   * @returns whether the line is valid; the results are then in {@link timeMs},
   *   {@link clientEnd} and {@link clientAscii}, otherwise the reason is in {@link reason}.
   */
  parse(bytes: Uint8Array, start: number, end: number): boolean {
    if (end > start && bytes[end - 1] === CR) end--;
    if (start >= end) return this.#fail(R_EMPTY);

    // host
    let p = start;
    while (p < end && bytes[p] !== SPACE) p++;
    if (p === start) return this.#fail(R_HOST);
    const clientEnd = p;
    // ident
    const identStart = ++p;
    while (p < end && bytes[p] !== SPACE) p++;
    if (p === identStart) return this.#fail(R_IDENT);
    if (p >= end) return this.#fail(R_AUTHUSER);
    // authuser
    const userStart = ++p;
    while (p < end && bytes[p] !== SPACE) p++;
    if (p === userStart) return this.#fail(R_AUTHUSER);
    const userEnd = p;
    p++;

    // [dd/Mon/yyyy:HH:MM:SS +zzzz]: 28 bytes from the bracket.
    if (p >= end || bytes[p] !== OPEN_BRACKET) return this.#fail(R_NO_TIMESTAMP);
    if (end - p < 28) return this.#fail(R_TIMESTAMP);
    const d0 = (bytes[p + 1] as number) - ZERO;
    const d1 = (bytes[p + 2] as number) - ZERO;
    const y0 = (bytes[p + 8] as number) - ZERO;
    const y1 = (bytes[p + 9] as number) - ZERO;
    const y2 = (bytes[p + 10] as number) - ZERO;
    const y3 = (bytes[p + 11] as number) - ZERO;
    const h0 = (bytes[p + 13] as number) - ZERO;
    const h1 = (bytes[p + 14] as number) - ZERO;
    const m0 = (bytes[p + 16] as number) - ZERO;
    const m1 = (bytes[p + 17] as number) - ZERO;
    const s0 = (bytes[p + 19] as number) - ZERO;
    const s1 = (bytes[p + 20] as number) - ZERO;
    const sign = bytes[p + 22] as number;
    const z0 = (bytes[p + 23] as number) - ZERO;
    const z1 = (bytes[p + 24] as number) - ZERO;
    const z2 = (bytes[p + 25] as number) - ZERO;
    const z3 = (bytes[p + 26] as number) - ZERO;
    if (
      bytes[p + 3] !== SLASH ||
      bytes[p + 7] !== SLASH ||
      bytes[p + 12] !== COLON ||
      bytes[p + 15] !== COLON ||
      bytes[p + 18] !== COLON ||
      bytes[p + 21] !== SPACE ||
      bytes[p + 27] !== CLOSE_BRACKET ||
      // Each digit, as an unsigned value, must be below 10.
      (d0 >>> 0) > 9 || (d1 >>> 0) > 9 ||
      (y0 >>> 0) > 9 || (y1 >>> 0) > 9 || (y2 >>> 0) > 9 || (y3 >>> 0) > 9 ||
      (h0 >>> 0) > 9 || (h1 >>> 0) > 9 || (m0 >>> 0) > 9 || (m1 >>> 0) > 9 ||
      (s0 >>> 0) > 9 || (s1 >>> 0) > 9
    ) {
      return this.#fail(R_TIMESTAMP);
    }
    const month = monthNumber(
      bytes[p + 4] as number,
      bytes[p + 5] as number,
      bytes[p + 6] as number,
    );
    if (month === 0) return this.#fail(R_MONTH);
    const year = y0 * 1000 + y1 * 100 + y2 * 10 + y3;
    const day = d0 * 10 + d1;
    if (day < 1 || day > daysInMonth(year, month)) return this.#fail(R_DAY);
    const hour = h0 * 10 + h1;
    const minute = m0 * 10 + m1;
    const second = s0 * 10 + s1;
    if (hour > 23 || minute > 59 || second > 60) return this.#fail(R_TIME);
    if (
      (sign !== PLUS && sign !== MINUS) ||
      (z0 >>> 0) > 9 || (z1 >>> 0) > 9 || (z2 >>> 0) > 9 || (z3 >>> 0) > 9
    ) {
      return this.#fail(R_ZONE);
    }
    const zoneHours = z0 * 10 + z1;
    const zoneMinutes = z2 * 10 + z3;
    if (zoneHours > 23 || zoneMinutes > 59) return this.#fail(R_ZONE);
    // Local time = UTC + offset, so UTC = local - offset.
    const offsetSeconds = (zoneHours * 3600 + zoneMinutes * 60) * (sign === PLUS ? 1 : -1);
    const seconds =
      daysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second - offsetSeconds;
    p += 28;

    // "request", with backslash escapes.
    if (end - p < 2 || bytes[p] !== SPACE || bytes[p + 1] !== QUOTE) {
      return this.#fail(R_NO_REQUEST);
    }
    p += 2;
    // The closing quote: the first one not escaped by an odd run of backslashes. A native
    // search; it may run past `end` (up to the next quote), but the search of a line never
    // overlaps the next searching line's, so the total work stays linear in the input.
    const requestStart = p;
    for (;;) {
      const quote = bytes.indexOf(QUOTE, p);
      if (quote === -1 || quote >= end) return this.#fail(R_UNTERMINATED);
      let run = quote;
      while (run > requestStart && bytes[run - 1] === BACKSLASH) run--;
      p = quote + 1;
      if (((quote - run) & 1) === 0) break;
    }

    // status: three digits.
    if (
      end - p < 4 ||
      bytes[p] !== SPACE ||
      ((bytes[p + 1] as number) - ZERO) >>> 0 > 9 ||
      ((bytes[p + 2] as number) - ZERO) >>> 0 > 9 ||
      ((bytes[p + 3] as number) - ZERO) >>> 0 > 9
    ) {
      return this.#fail(R_STATUS);
    }
    p += 4;
    if (p < end && bytes[p] !== SPACE) return this.#fail(R_STATUS);

    // bytes: digits or "-", then the end of the line or a space.
    if (end - p < 2) return this.#fail(R_BYTES);
    p++;
    if (bytes[p] === MINUS) {
      p++;
    } else {
      const digitsStart = p;
      while (p < end && ((bytes[p] as number) - ZERO) >>> 0 <= 9) p++;
      if (p === digitsStart) return this.#fail(R_BYTES);
    }
    if (p < end && bytes[p] !== SPACE) return this.#fail(R_BYTES);

    this.timeMs = seconds * 1000;
    if (this.#user) {
      this.keyStart = userStart;
      this.keyEnd = userEnd;
    } else {
      this.keyStart = start;
      this.keyEnd = clientEnd;
    }
    return true;
  }

  #fail(reason: number): false {
    this.reason = MALFORMED_REASONS[reason] as string;
    return false;
  }
}

/** A parsed line: the key and the time. */
export interface ParsedLogLine {
  /** The client address: the first field, used as the rate-limit key. */
  readonly client: string;
  /** The request time in **milliseconds** since 1970-01-01T00:00:00Z, zone offset applied. */
  readonly timeMs: number;
}

const sharedParser = new ClfFormat();

/**
 * Parses one access-log line (Common or Combined Log Format; see the module documentation for
 * exactly what is accepted).
 *
 * A pure function of `line`. It runs the same byte-level parser as the replay reader on the
 * line's UTF-8 bytes, so a line gets the same result from both.
 *
 * @param line - one line, without its `\n`; a trailing `\r` is ignored.
 * @returns the client and the time in **milliseconds** since the epoch (UTC), or `null` when
 *   the line is malformed (see {@link malformedReason} for why).
 */
export function parseLogLine(line: string): ParsedLogLine | null {
  const bytes = Buffer.from(line, 'utf8');
  if (!sharedParser.parse(bytes, 0, bytes.length)) return null;
  return { client: decodeKeyBytes(bytes, sharedParser.keyStart, sharedParser.keyEnd), timeMs: sharedParser.timeMs };
}

/**
 * Why {@link parseLogLine} rejects `line`: a short reason such as `"bad month"`, or `null` when
 * the line is valid.
 */
export function malformedReason(line: string): MalformedReason | null {
  const bytes = Buffer.from(line, 'utf8');
  if (sharedParser.parse(bytes, 0, bytes.length)) return null;
  return sharedParser.reason as MalformedReason;
}
