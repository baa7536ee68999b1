/**
 * A byte-level parser of JSON-lines access logs ({@link JsonLinesFormat}): one JSON object per
 * line, as nginx writes with `log_format … escape=json`, Caddy's JSON access log, and most
 * structured loggers. Two fields are read, at dotted paths into nested objects
 * (`request.client_ip`): the request time and the key.
 *
 * **How it parses.** Not `JSON.parse` per line (a string, then a tree of objects, for two
 * values; `npm run bench:formats` measures it several times slower), but one pass over the bytes
 * that checks the line's structure against RFC 8259 and notes where the two fields' values are.
 * It allocates nothing per line.
 *
 * Why one file of about 780 lines (over half of it comments: the contract below and each
 * step's reason): one concern, one pass over a line's bytes, whose grammar checks, path matching
 * and value reading share the position and the state of that pass; split, each part would hand
 * the cursor back and forth on the hot path. The time formats it reads live in `iso-time.ts`.
 *
 * **The contract** (what the property tests check against `JSON.parse`):
 * - A line is accepted only if it is one JSON object (leading and trailing whitespace allowed)
 *   by RFC 8259's grammar: objects, arrays, strings with their escapes checked (`\"`, `\\`, `\/`,
 *   `\b`, `\f`, `\n`, `\r`, `\t`, `\u` and four hex digits) and no raw control character
 *   (U+0000–U+001F), numbers (`-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?`), `true`, `false`,
 *   `null`. Exactly the lines on which `JSON.parse` returns an object (not an array, a string,
 *   a number…) pass this check, with one exception where this parser is stricter: containers nested
 *   deeper than {@link MAX_JSON_DEPTH} (`nested too deeply`; `JSON.parse`'s limit is the stack).
 *   Validating strings costs a table lookup per byte, and is kept: at these speeds the bytes have
 *   to be read anyway to find the string's end, and nginx, Caddy and the loggers never write what
 *   it refuses, so a refused line is damaged (cut, or glued to another).
 * - Bytes from 0x80 up are not checked as UTF-8 (`JSON.parse` sees the string the reader
 *   decoded, U+FFFD in place of a bad byte; here a key keeps its bytes, see `decodeKeyBytes`).
 * - A field is found as `JSON.parse` would find it: nested objects along the path, the **last**
 *   of duplicate keys (so a later `"request": {…}` without the field hides an earlier one). A
 *   path never goes through an array. A key is compared by its raw bytes: a key written with
 *   escapes (`"t\u0073"`) is not the field `ts` (no logger escapes plain key names).
 *
 * **Time.** The time field's value, by `timeFormat`:
 * - `iso8601`: a string holding an ISO 8601 / RFC 3339 timestamp with a zone (see
 *   `parseIsoTime`: `2024-03-10T14:02:07+01:00`, `…07.123Z`; no zone is refused).
 * - `epoch-s`: seconds since the epoch, a number or a string holding one, fraction allowed
 *   (Caddy's `"ts":1700000000.123456`, nginx's `"$msec"`, `"1700000000.123"`).
 * - `epoch-ms`: milliseconds since the epoch, likewise (pino's `"time":1700000000123`).
 * - `auto` (the default): per value. A string of the shape `YYYY-MM-DD…` is ISO 8601; any other
 *   number or numeric string is epoch seconds if its magnitude is below 10^11, epoch
 *   milliseconds from 10^11 up: 10^11 s is the year 5138, 10^11 ms is 1973-03-03, so for times
 *   from 1973 to 5138 the magnitude tells the unit without doubt.
 *
 * Every result is floored to a whole millisecond and must lie within the years 0000–9999 (as
 * ISO times do), else the time is bad. Exponents (`1.7e9`) are accepted, converted in floating
 * point (the plain decimals logs write are converted digit by digit, exactly).
 *
 * **Key.** The key field's value: a non-empty string (its bytes; `keyEscaped` when it holds a
 * backslash escape, decoded as JSON by the collector) or a number (its literal bytes: `1.0` and
 * `1` are two keys; the number `7` and the string `"7"` are one). `null`, `true`, `false`, an
 * object, an array or `""` are no key.
 *
 * **Defaults.** A field not given is detected on the first line that is a JSON object from the
 * candidate lists {@link TIME_FIELD_CANDIDATES} and {@link KEY_FIELD_CANDIDATES}: the first
 * candidate present whose value is a time (by `timeFormat`), resp. a key, is chosen and kept for
 * the rest of the input; {@link JsonLinesFormat.timeField} and {@link JsonLinesFormat.keyField}
 * then say which. Until both are found, each object line is malformed (`no time field among the
 * defaults`, `no key field among the defaults`) and the next one is tried.
 *
 * Malformed lines and their reasons: see {@link JsonLinesFormat.parse}.
 *
 * One concern in about 770 lines, a quarter of them documentation: reading one JSON line at
 * speed, where the structure check, the path bookkeeping, the field detection and the number and
 * time conversions share the scanner's state and hot loop; split apart, each would pay a call or
 * a second pass per line.
 *
 * @module
 */

import { checkKnownKeys, checkObject, rangeError, typeError } from '../errors.js';
import { parseIsoTime } from './iso-time.js';
import type { LineFormat } from './format.js';

/** How the time field's value is read; see the module documentation. */
export type JsonTimeFormat = 'auto' | 'iso8601' | 'epoch-s' | 'epoch-ms';

/** The values of {@link JsonTimeFormat}, as `--time-format` takes them. */
export const JSON_TIME_FORMATS: readonly JsonTimeFormat[] = ['auto', 'iso8601', 'epoch-s', 'epoch-ms'];

/** The options of {@link JsonLinesFormat}. */
export interface JsonLinesOptions {
  /**
   * The time field: a dotted path into nested objects (`ts`, `request.time`). Each segment is a
   * key, compared by its bytes; no segment may be empty.
   *
   * @default detected from {@link TIME_FIELD_CANDIDATES} on the first JSON object line
   */
  readonly timeField?: string | undefined;
  /**
   * How the time field's value is read: `iso8601`, `epoch-s` (seconds), `epoch-ms`
   * (milliseconds) or `auto` (per value; see the module documentation).
   *
   * @default 'auto'
   */
  readonly timeFormat?: JsonTimeFormat | undefined;
  /**
   * The key field: a dotted path, as {@link timeField}.
   *
   * @default detected from {@link KEY_FIELD_CANDIDATES} on the first JSON object line
   */
  readonly keyField?: string | undefined;
}

/**
 * The time fields tried, in this order, when `timeField` is not given: Caddy's and zap's `ts`
 * (epoch seconds), nginx's `msec` (seconds with milliseconds: finer than `time_iso8601`),
 * Logstash's and Elastic's `@timestamp`, `timestamp`, nginx's `time_iso8601`, `time` (pino: epoch
 * ms; bunyan, logrus, slog: ISO 8601), `datetime`. A candidate counts only if its value is a time
 * (a `time` holding nginx's `$time_local` is passed over).
 */
export const TIME_FIELD_CANDIDATES: readonly string[] = [
  'ts',
  'msec',
  '@timestamp',
  'timestamp',
  'time_iso8601',
  'time',
  'datetime',
];

/**
 * The key fields tried, in this order, when `keyField` is not given: Caddy's
 * `request.client_ip` (the client address after its `trusted_proxies`, since Caddy 2.7) and
 * `request.remote_ip` (the connection's address, older Caddy), then flat fields named after
 * nginx's `$remote_addr` and its variants (`client_ip`, `remote_addr`, `remote_ip`), Elastic
 * Common Schema's `client.ip` and `source.ip`, `ip`, and pino-http's `req.remoteAddress`. A
 * candidate counts only if its value is a key (a non-empty string or a number).
 */
export const KEY_FIELD_CANDIDATES: readonly string[] = [
  'request.client_ip',
  'request.remote_ip',
  'client_ip',
  'remote_addr',
  'remote_ip',
  'client.ip',
  'source.ip',
  'ip',
  'req.remoteAddress',
];

/** Containers (objects and arrays) nested deeper than this make a line malformed. */
export const MAX_JSON_DEPTH = 128;

/** The earliest time accepted, in ms: 0000-01-01T00:00:00Z. */
const MIN_MS = -62167219200000;
/** The latest time accepted, in ms: 9999-12-31T23:59:59.999Z. */
const MAX_MS = 253402300799999;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;
const SPACE = 0x20;
const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const LOWER_E = 0x65;
const UPPER_E = 0x45;

/** What a found value is. */
const T_NONE = 0;
const T_STRING = 1;
const T_NUMBER = 2;
/** `true`, `false`, `null`, an object or an array. */
const T_OTHER = 3;

/** Containers on the stack. */
const C_OBJECT = 1;
const C_ARRAY = 2;

/** States of the scanner: what may come next. */
const S_KEY_OR_CLOSE = 0; // after `{`
const S_KEY = 1; // after `,` in an object
const S_VALUE = 2; // after `:`, or after `,` in an array
const S_VALUE_OR_CLOSE = 3; // after `[`
const S_AFTER_VALUE = 4;

/** Structural reasons, by code (0: none). */
const STRUCTURE_REASONS = [
  'none',
  'not a JSON object',
  'unterminated JSON',
  'bad JSON syntax',
  'bad escape in a string',
  'control character in a string',
  'text after the object',
  'nested too deeply',
] as const;
const R_NOT_OBJECT = 1;
const R_UNTERMINATED = 2;
const R_SYNTAX = 3;
const R_ESCAPE = 4;
const R_CONTROL = 5;
const R_TRAILING = 6;
const R_DEPTH = 7;

const NO_TIME_DETECTED = 'no time field among the defaults';
const NO_KEY_DETECTED = 'no key field among the defaults';

/** The bytes that end a run of plain string bytes: the quote, the backslash, control characters. */
const STRING_STOP = new Uint8Array(256);
STRING_STOP.fill(1, 0, 0x20);
STRING_STOP[QUOTE] = 1;
STRING_STOP[BACKSLASH] = 1;

/** Whitespace by RFC 8259: space, tab, line feed, carriage return. */
function isSpace(b: number): boolean {
  return b === SPACE || b === TAB || b === LF || b === CR;
}

/** Whether `b` is an ASCII hex digit. */
function isHex(b: number): boolean {
  return (b >= ZERO && b <= NINE) || ((b | 0x20) >= 0x61 && (b | 0x20) <= 0x66);
}

/** One field's path: its segments as UTF-8 bytes. */
function compilePath(path: string): Uint8Array[] {
  return path.split('.').map((segment) => new TextEncoder().encode(segment));
}

/**
 * Checks a field option: undefined, or a dotted path of non-empty segments.
 * @throws {RateWardenTypeError} when it is neither a string nor undefined.
 * @throws {RateWardenRangeError} when it is a string with an empty segment.
 */
function checkField(name: string, value: unknown): string | undefined {
  const expected = 'a dotted path of non-empty keys (such as "request.client_ip") or undefined';
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw typeError(name, expected, value);
  if (value.split('.').some((segment) => segment === '')) throw rangeError(name, expected, value);
  return value;
}

/**
 * How errors name the options of {@link JsonLinesFormat} (the command line passes its own:
 * `--time-field`, `--time-format`, `--key field:PATH`); by default their own names.
 */
export interface JsonLinesNames {
  readonly timeField?: string | undefined;
  readonly timeFormat?: string | undefined;
  readonly keyField?: string | undefined;
}

const JSON_LINES_OPTIONS = Object.keys({
  timeField: true,
  timeFormat: true,
  keyField: true,
} satisfies Record<keyof JsonLinesOptions, true>);

/**
 * The byte-level parser of JSON-lines access logs, a {@link LineFormat}: {@link parse} reads one
 * line and leaves its time and the bytes of its key in the parser's fields, allocating nothing.
 * One instance is reused for every line of an input (it keeps the fields it detected).
 */
export class JsonLinesFormat implements LineFormat {
  readonly name = 'json';
  timeMs = 0;
  keyStart = 0;
  keyEnd = 0;
  keyEscaped = false;
  reason = 'none';

  readonly #timeFormat: JsonTimeFormat;
  #timeField: string | undefined;
  #keyField: string | undefined;
  readonly #timeGiven: boolean;
  readonly #keyGiven: boolean;
  #timePath: Uint8Array[] = [];
  #keyPath: Uint8Array[] = [];
  #noTime = '';
  #badTime = '';
  #noKey = '';
  #notKey = '';
  #emptyKey = '';

  /** The containers open while scanning (C_OBJECT or C_ARRAY). */
  readonly #stack = new Uint8Array(MAX_JSON_DEPTH + 1);
  /** What the scan found at the time path: its type, its bytes, whether it holds an escape. */
  #timeType = T_NONE;
  #timeStart = 0;
  #timeEnd = 0;
  #timeEscaped = false;
  #keyType = T_NONE;
  #keyValueStart = 0;
  #keyValueEnd = 0;
  #keyValueEscaped = false;
  /** Set by #string: whether the string just scanned holds a backslash escape. */
  #escaped = false;
  /** Set by #string and #number on failure: the structural reason code. */
  #error = 0;

  /**
   * @param options - the fields and the time format; see {@link JsonLinesOptions}.
   * @param names - how the errors below name each option (default: `timeField`, `timeFormat`,
   *   `keyField`).
   * @throws {RateWardenTypeError} when `options` is not an object, has a key that is not an
   *   option, or when `timeField`, `keyField` or `timeFormat` is neither a string nor undefined.
   * @throws {RateWardenRangeError} when `timeField` or `keyField` has an empty segment (`""`,
   *   `"a..b"`, `".a"`), or `timeFormat` is not one of `auto`, `iso8601`, `epoch-s`, `epoch-ms`.
   */
  constructor(options: JsonLinesOptions = {}, names: JsonLinesNames = {}) {
    checkObject('options', options, 'a JsonLinesOptions object');
    checkKnownKeys(options, JSON_LINES_OPTIONS, 'JsonLinesFormat options');
    const timeField = checkField(names.timeField ?? 'timeField', options.timeField);
    const keyField = checkField(names.keyField ?? 'keyField', options.keyField);
    const format: unknown = options.timeFormat;
    const expected = `one of ${JSON_TIME_FORMATS.map((f) => `"${f}"`).join(', ')} or undefined`;
    const timeFormatName = names.timeFormat ?? 'timeFormat';
    if (format !== undefined && typeof format !== 'string') throw typeError(timeFormatName, expected, format);
    if (format !== undefined && !(JSON_TIME_FORMATS as readonly string[]).includes(format)) {
      throw rangeError(timeFormatName, expected, format);
    }
    this.#timeFormat = format === undefined ? 'auto' : (format as JsonTimeFormat);
    this.#timeGiven = timeField !== undefined;
    this.#keyGiven = keyField !== undefined;
    if (timeField !== undefined) this.#setTimeField(timeField);
    if (keyField !== undefined) this.#setKeyField(keyField);
  }

  /**
   * The time field: the one given, or the one detected (`undefined` until a line has been parsed
   * that let it be detected).
   */
  get timeField(): string | undefined {
    return this.#timeField;
  }

  /** The key field: the one given, or the one detected (`undefined` until then). */
  get keyField(): string | undefined {
    return this.#keyField;
  }

  /** How time values are read: the `timeFormat` option (`auto` by default). */
  get timeFormat(): JsonTimeFormat {
    return this.#timeFormat;
  }

  /** What the time is, for the report: `JSON field ts (auto)` (`JSON field (not yet detected)` before detection). */
  get timeLabel(): string {
    return `JSON field ${this.#timeField ?? '(not yet detected)'} (${this.#timeFormat})`;
  }

  /** What the key is, for the report: `JSON field request.client_ip` (`JSON field (not yet detected)` before detection). */
  get keyLabel(): string {
    return `JSON field ${this.#keyField ?? '(not yet detected)'}`;
  }

  /**
   * Parses the line in `bytes[start, end)` (without its `\n`; a trailing `\r` is whitespace).
   * Nothing at or after `end` is read.
   *
   * Reasons of a malformed line: `not a JSON object` (the first byte that is not whitespace is
   * not `{`), `unterminated JSON`, `bad JSON syntax`, `bad escape in a string`, `control
   * character in a string`, `text after the object`, `nested too deeply`; then, for the fields
   * (`F` their paths): `no field F` (missing, or a path through something that is not an
   * object), `bad time in F` (not a time by `timeFormat`, or outside the years 0000–9999),
   * `F is not a string or number` (the key is null, a boolean, an object or an array),
   * `empty F` (the key is `""`); and before detection succeeds, `no time field among the
   * defaults` or `no key field among the defaults`.
   *
   * @returns whether the line is a request; see {@link LineFormat.parse}.
   */
  parse(bytes: Uint8Array, start: number, end: number): boolean {
    if (this.#timeField === undefined || this.#keyField === undefined) return this.#detect(bytes, start, end);
    const structure = this.#scan(bytes, start, end);
    if (structure !== 0) return this.#fail(STRUCTURE_REASONS[structure] as string);
    const time = this.#time(bytes);
    if (Number.isNaN(time)) return this.#fail(this.#timeType === T_NONE ? this.#noTime : this.#badTime);
    const keyReason = this.#keyReason();
    if (keyReason !== undefined) return this.#fail(keyReason);
    this.timeMs = time;
    this.keyStart = this.#keyValueStart;
    this.keyEnd = this.#keyValueEnd;
    this.keyEscaped = this.#keyValueEscaped;
    return true;
  }

  #fail(reason: string): false {
    this.reason = reason;
    return false;
  }

  #setTimeField(field: string): void {
    this.#timeField = field;
    this.#timePath = compilePath(field);
    this.#noTime = `no field ${field}`;
    this.#badTime = `bad time in ${field}`;
  }

  #setKeyField(field: string): void {
    this.#keyField = field;
    this.#keyPath = compilePath(field);
    this.#noKey = `no field ${field}`;
    this.#notKey = `${field} is not a string or number`;
    this.#emptyKey = `empty ${field}`;
  }

  /** The reason the key found by the last scan is no key, or undefined when it is one. */
  #keyReason(): string | undefined {
    const type = this.#keyType;
    if (type === T_NONE) return this.#noKey;
    if (type === T_OTHER) return this.#notKey;
    if (this.#keyValueEnd === this.#keyValueStart) return this.#emptyKey;
    return undefined;
  }

  /**
   * Detection, on a line while a field is still unknown: each candidate in turn, the first whose
   * value is a time (resp. a key) is kept. Only the first line that is a JSON object with both
   * fixes them; until then lines are malformed.
   */
  #detect(bytes: Uint8Array, start: number, end: number): boolean {
    // The structure first, with the fields given (if any) or a candidate.
    if (!this.#timeGiven) this.#setTimeField(TIME_FIELD_CANDIDATES[0] as string);
    if (!this.#keyGiven) this.#setKeyField(KEY_FIELD_CANDIDATES[0] as string);
    const structure = this.#scan(bytes, start, end);
    let timeField: string | undefined = this.#timeGiven ? this.#timeField : undefined;
    let keyField: string | undefined = this.#keyGiven ? this.#keyField : undefined;
    if (structure === 0) {
      for (let i = 0; timeField === undefined && i < TIME_FIELD_CANDIDATES.length; i++) {
        const candidate = TIME_FIELD_CANDIDATES[i] as string;
        this.#setTimeField(candidate);
        this.#scan(bytes, start, end);
        if (!Number.isNaN(this.#time(bytes))) timeField = candidate;
      }
      for (let i = 0; keyField === undefined && i < KEY_FIELD_CANDIDATES.length; i++) {
        const candidate = KEY_FIELD_CANDIDATES[i] as string;
        this.#setKeyField(candidate);
        this.#scan(bytes, start, end);
        if (this.#keyReason() === undefined) keyField = candidate;
      }
    }
    if (structure !== 0 || timeField === undefined || keyField === undefined) {
      if (!this.#timeGiven) this.#timeField = undefined;
      if (!this.#keyGiven) this.#keyField = undefined;
      if (structure !== 0) return this.#fail(STRUCTURE_REASONS[structure] as string);
      return this.#fail(timeField === undefined ? NO_TIME_DETECTED : NO_KEY_DETECTED);
    }
    this.#setTimeField(timeField);
    this.#setKeyField(keyField);
    return this.parse(bytes, start, end);
  }

  /**
   * The time found by the last scan, in ms, or NaN (missing, or not a time by the format).
   */
  #time(bytes: Uint8Array): number {
    const type = this.#timeType;
    const start = this.#timeStart;
    const end = this.#timeEnd;
    const format = this.#timeFormat;
    if (type === T_STRING) {
      if (this.#timeEscaped) return NaN;
      if (format === 'iso8601') return parseIsoTime(bytes, start, end);
      if (format === 'auto' && end - start >= 20 && bytes[start + 4] === MINUS) {
        return parseIsoTime(bytes, start, end);
      }
      return epochMs(bytes, start, end, format);
    }
    if (type === T_NUMBER && format !== 'iso8601') return epochMs(bytes, start, end, format);
    return NaN;
  }

  /**
   * One pass over `bytes[start, end)`: checks that it is one JSON object and notes the values at
   * the time and key paths (#timeType, #keyType and their ranges). Returns 0 or a structural
   * reason code.
   */
  #scan(bytes: Uint8Array, start: number, end: number): number {
    const stack = this.#stack;
    const timePath = this.#timePath;
    const keyPath = this.#keyPath;
    const timeLast = timePath.length;
    const keyLast = keyPath.length;
    this.#timeType = T_NONE;
    this.#keyType = T_NONE;
    let p = start;
    while (p < end && isSpace(bytes[p] as number)) p++;
    if (p >= end || bytes[p] !== OPEN_BRACE) return R_NOT_OBJECT;
    p++;
    stack[1] = C_OBJECT;
    let depth = 1;
    // The depth of the deepest open container on each path (1: the line's object).
    let timeOn = 1;
    let keyOn = 1;
    // For the value after a key: 0 the key is on no path; 1 the path goes on into this value;
    // 2 this value is the field.
    let timeHit = 0;
    let keyHit = 0;
    let state = S_KEY_OR_CLOSE;
    for (;;) {
      while (p < end && isSpace(bytes[p] as number)) p++;
      if (p >= end) return depth === 0 ? 0 : R_UNTERMINATED;
      if (depth === 0) return R_TRAILING;
      const c = bytes[p] as number;
      if (state === S_AFTER_VALUE) {
        const container = stack[depth];
        if (c === COMMA) {
          state = container === C_OBJECT ? S_KEY : S_VALUE;
          p++;
          continue;
        }
        if ((c === CLOSE_BRACE && container === C_OBJECT) || (c === CLOSE_BRACKET && container === C_ARRAY)) {
          if (timeOn === depth && depth > 1) timeOn--;
          if (keyOn === depth && depth > 1) keyOn--;
          depth--;
          p++;
          continue;
        }
        return R_SYNTAX;
      }
      if (state === S_KEY_OR_CLOSE || state === S_KEY) {
        if (c === CLOSE_BRACE && state === S_KEY_OR_CLOSE) {
          if (timeOn === depth && depth > 1) timeOn--;
          if (keyOn === depth && depth > 1) keyOn--;
          depth--;
          p++;
          state = S_AFTER_VALUE;
          continue;
        }
        if (c !== QUOTE) return R_SYNTAX;
        const keyStart = p + 1;
        const close = this.#string(bytes, keyStart, end);
        if (close < 0) return this.#error;
        // Is this key the next segment of a path whose containers are all open?
        timeHit = 0;
        keyHit = 0;
        if (timeOn === depth && !this.#escaped && sameBytes(bytes, keyStart, close, timePath[depth - 1] as Uint8Array)) {
          timeHit = depth === timeLast ? 2 : 1;
          this.#timeType = T_NONE;
        }
        if (keyOn === depth && !this.#escaped && sameBytes(bytes, keyStart, close, keyPath[depth - 1] as Uint8Array)) {
          keyHit = depth === keyLast ? 2 : 1;
          this.#keyType = T_NONE;
        }
        p = close + 1;
        while (p < end && isSpace(bytes[p] as number)) p++;
        if (p >= end) return R_UNTERMINATED;
        if (bytes[p] !== COLON) return R_SYNTAX;
        p++;
        state = S_VALUE;
        continue;
      }
      // S_VALUE or S_VALUE_OR_CLOSE
      if (c === CLOSE_BRACKET && state === S_VALUE_OR_CLOSE) {
        depth--;
        p++;
        state = S_AFTER_VALUE;
        continue;
      }
      const valueStart = p;
      let type: number;
      if (c === QUOTE) {
        const close = this.#string(bytes, p + 1, end);
        if (close < 0) return this.#error;
        p = close + 1;
        type = T_STRING;
      } else if (c === MINUS || (c >= ZERO && c <= NINE)) {
        p = this.#number(bytes, p, end);
        if (p < 0) return this.#error;
        type = T_NUMBER;
      } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
        if (depth === MAX_JSON_DEPTH) return R_DEPTH;
        depth++;
        p++;
        if (c === OPEN_BRACE) {
          stack[depth] = C_OBJECT;
          if (timeHit === 1) timeOn = depth;
          if (keyHit === 1) keyOn = depth;
          state = S_KEY_OR_CLOSE;
        } else {
          stack[depth] = C_ARRAY;
          state = S_VALUE_OR_CLOSE;
        }
        if (timeHit === 2) this.#timeType = T_OTHER;
        if (keyHit === 2) this.#keyType = T_OTHER;
        timeHit = 0;
        keyHit = 0;
        continue;
      } else {
        p = literal(bytes, p, end);
        if (p < 0) return p === -1 ? R_UNTERMINATED : R_SYNTAX;
        type = T_OTHER;
      }
      if (timeHit === 2) {
        this.#timeType = type;
        this.#timeStart = type === T_STRING ? valueStart + 1 : valueStart;
        this.#timeEnd = type === T_STRING ? p - 1 : p;
        this.#timeEscaped = type === T_STRING && this.#escaped;
      }
      if (keyHit === 2) {
        this.#keyType = type;
        this.#keyValueStart = type === T_STRING ? valueStart + 1 : valueStart;
        this.#keyValueEnd = type === T_STRING ? p - 1 : p;
        this.#keyValueEscaped = type === T_STRING && this.#escaped;
      }
      timeHit = 0;
      keyHit = 0;
      state = S_AFTER_VALUE;
    }
  }

  /**
   * Scans a string's body from `p` (after its opening quote): returns the index of its closing
   * quote and sets #escaped, or -1 with #error set.
   */
  #string(bytes: Uint8Array, p: number, end: number): number {
    let escaped = false;
    for (;;) {
      // The plain bytes, by a table lookup: the loop most of a line's bytes go through, four
      // bytes a turn while four are left (one branch for four lookups), then one by one.
      while (
        p + 4 <= end &&
        (STRING_STOP[bytes[p] as number]! | STRING_STOP[bytes[p + 1] as number]! | STRING_STOP[bytes[p + 2] as number]! | STRING_STOP[bytes[p + 3] as number]!) === 0
      ) {
        p += 4;
      }
      while (p < end && STRING_STOP[bytes[p] as number] === 0) p++;
      if (p >= end) {
        this.#error = R_UNTERMINATED;
        return -1;
      }
      const b = bytes[p] as number;
      if (b === QUOTE) break;
      if (b !== BACKSLASH) {
        this.#error = R_CONTROL;
        return -1;
      }
      escaped = true;
      if (p + 1 >= end) {
        this.#error = R_UNTERMINATED;
        return -1;
      }
      const e = bytes[p + 1] as number;
      if (e === 0x75 /* u */) {
        if (p + 6 > end) {
          this.#error = R_UNTERMINATED;
          return -1;
        }
        if (
          !isHex(bytes[p + 2] as number) ||
          !isHex(bytes[p + 3] as number) ||
          !isHex(bytes[p + 4] as number) ||
          !isHex(bytes[p + 5] as number)
        ) {
          this.#error = R_ESCAPE;
          return -1;
        }
        p += 6;
      } else if (
        e === QUOTE || e === BACKSLASH || e === 0x2f /* / */ || e === 0x62 /* b */ ||
        e === 0x66 /* f */ || e === 0x6e /* n */ || e === 0x72 /* r */ || e === 0x74 /* t */
      ) {
        p += 2;
      } else {
        this.#error = R_ESCAPE;
        return -1;
      }
    }
    this.#escaped = escaped;
    return p;
  }

  /** Scans a number from `p`: returns the index after it, or -1 with #error set. */
  #number(bytes: Uint8Array, p: number, end: number): number {
    if (bytes[p] === MINUS) p++;
    if (p >= end) return this.#numberError(R_UNTERMINATED);
    let b = bytes[p] as number;
    if (b === ZERO) {
      p++;
    } else if (b > ZERO && b <= NINE) {
      p++;
      while (p < end && ((bytes[p] as number) - ZERO) >>> 0 <= 9) p++;
    } else {
      return this.#numberError(R_SYNTAX);
    }
    if (p < end && bytes[p] === DOT) {
      p++;
      const digits = p;
      while (p < end && ((bytes[p] as number) - ZERO) >>> 0 <= 9) p++;
      if (p === digits) return this.#numberError(p >= end ? R_UNTERMINATED : R_SYNTAX);
    }
    if (p < end && (bytes[p] === LOWER_E || bytes[p] === UPPER_E)) {
      p++;
      if (p < end) {
        b = bytes[p] as number;
        if (b === PLUS || b === MINUS) p++;
      }
      const digits = p;
      while (p < end && ((bytes[p] as number) - ZERO) >>> 0 <= 9) p++;
      if (p === digits) return this.#numberError(p >= end ? R_UNTERMINATED : R_SYNTAX);
    }
    return p;
  }

  #numberError(code: number): number {
    this.#error = code;
    return -1;
  }
}

/** Whether `bytes[start, end)` equals `segment`. */
function sameBytes(bytes: Uint8Array, start: number, end: number, segment: Uint8Array): boolean {
  if (end - start !== segment.length) return false;
  for (let i = 0; i < segment.length; i++) {
    if (bytes[start + i] !== segment[i]) return false;
  }
  return true;
}

/** Scans `true`, `false` or `null` at `p`: the index after it, -1 if the line ends inside, -2 if it is none. */
function literal(bytes: Uint8Array, p: number, end: number): number {
  const word = bytes[p] === 0x74 ? TRUE : bytes[p] === 0x66 ? FALSE : bytes[p] === 0x6e ? NULL : undefined;
  if (word === undefined) return -2;
  for (let i = 1; i < word.length; i++) {
    if (p + i >= end) return -1;
    if (bytes[p + i] !== word[i]) return -2;
  }
  return p + word.length;
}

const TRUE = new TextEncoder().encode('true');
const FALSE = new TextEncoder().encode('false');
const NULL = new TextEncoder().encode('null');

/** 10^0 … 10^3. */
const POW10 = [1, 10, 100, 1000];

/**
 * The number in `bytes[start, end)` (a JSON number, or a string's body holding one) as epoch
 * milliseconds, floored: seconds for `epoch-s`, milliseconds for `epoch-ms`, by magnitude for
 * `auto` (below 10^11: seconds). NaN when it is no number or lies outside the years 0000–9999.
 * Plain decimals are converted digit by digit (exact); with an exponent, in floating point.
 */
function epochMs(bytes: Uint8Array, start: number, end: number, format: JsonTimeFormat): number {
  let p = start;
  const negative = p < end && bytes[p] === MINUS;
  if (negative) p++;
  const intStart = p;
  let int = 0;
  while (p < end && ((bytes[p] as number) - ZERO) >>> 0 <= 9) {
    int = int * 10 + ((bytes[p] as number) - ZERO);
    p++;
  }
  if (p === intStart) return NaN;
  let fracStart = p;
  let fracEnd = p;
  if (p < end && bytes[p] === DOT) {
    fracStart = ++p;
    while (p < end && ((bytes[p] as number) - ZERO) >>> 0 <= 9) p++;
    fracEnd = p;
    if (fracEnd === fracStart) return NaN;
  }
  let ms: number;
  if (p < end) {
    // An exponent (or anything else: Number says NaN).
    const b = bytes[p] as number;
    if (b !== LOWER_E && b !== UPPER_E) return NaN;
    let value = Number(new TextDecoder('latin1').decode(bytes.subarray(start, end)));
    if (!Number.isFinite(value)) return NaN;
    if (format === 'epoch-s' || (format === 'auto' && Math.abs(value) < 1e11)) value *= 1000;
    ms = Math.floor(value);
  } else {
    const seconds = format === 'epoch-s' || (format === 'auto' && int < 1e11);
    const shift = seconds ? 3 : 0;
    let fraction = 0;
    let rest = false;
    for (let i = 0; i < fracEnd - fracStart; i++) {
      const digit = (bytes[fracStart + i] as number) - ZERO;
      if (i < shift) fraction = fraction * 10 + digit;
      else if (digit !== 0) {
        rest = true;
        break;
      }
    }
    if (fracEnd - fracStart < shift) fraction *= POW10[shift - (fracEnd - fracStart)] as number;
    const magnitude = int * (POW10[shift] as number) + fraction;
    ms = negative ? -(magnitude + (rest ? 1 : 0)) : magnitude;
    if (ms === 0) ms = 0; // no -0
  }
  return ms >= MIN_MS && ms <= MAX_MS ? ms : NaN;
}
