/**
 * Choosing a format: {@link detectFormat} tells the format of a log from one of its lines (for
 * `--format auto`), and {@link createFormat} builds the {@link LineFormat} of a format by name.
 *
 * @module
 */

import { checkObject, rangeError, typeError } from '../errors.js';
import { AlbFormat } from './alb.js';
import { ClfFormat } from './clf.js';
import { parseIsoTime } from './iso-time.js';
import { JsonLinesFormat, type JsonTimeFormat } from './json-lines.js';
import type { FormatName, LineFormat } from './format.js';

const SPACE = 0x20;
const TAB = 0x09;
const CR = 0x0d;
const OPEN_BRACE = 0x7b;

/**
 * The format of the line in `bytes[start, end)` (without its `\n`; a trailing `\r` is ignored),
 * or `undefined` when it is none of them. Give it the first non-empty line of the input. In this
 * order:
 * - `json`: the first byte that is not a space or a tab is `{` (the line need not be valid JSON:
 *   the JSON parser then says what is wrong with it);
 * - `alb`: a run of lowercase letters and digits (the entry's type), one space, then an ISO 8601
 *   time with a zone up to the next space (an ALB entry's `time`);
 * - `clf`: the Common/Combined Log Format parser accepts the line.
 *
 * Reads nothing at or after `end`; allocates nothing but, once, the CLF parser it shares.
 */
export function detectFormat(bytes: Uint8Array, start: number, end: number): FormatName | undefined {
  if (end > start && bytes[end - 1] === CR) end--;
  let p = start;
  while (p < end && (bytes[p] === SPACE || bytes[p] === TAB)) p++;
  if (p < end && bytes[p] === OPEN_BRACE) return 'json';

  p = start;
  while (p < end && (((bytes[p] as number) >= 0x61 && (bytes[p] as number) <= 0x7a) || ((bytes[p] as number) >= 0x30 && (bytes[p] as number) <= 0x39))) p++;
  if (p > start && p < end && bytes[p] === SPACE) {
    const timeStart = ++p;
    while (p < end && bytes[p] !== SPACE) p++;
    if (!Number.isNaN(parseIsoTime(bytes, timeStart, p))) return 'alb';
  }

  return clfProbe.parse(bytes, start, end) ? 'clf' : undefined;
}

const clfProbe = new ClfFormat();

/**
 * The options of {@link createFormat}; each applies to some formats only, and giving one to a
 * format it does not apply to is an error (so that a `--time-field` given with `--format clf`
 * is not silently ignored).
 */
export interface FormatOptions {
  /**
   * The key. `clf`: `"host"` (the client address, the default) or `"user"` (the authenticated
   * user, `%u`). `json`: the key field, a dotted path (default: detected; see
   * `JsonLinesOptions.keyField`). `alb`: not applicable (the key is the client address).
   */
  readonly key?: string | undefined;
  /** `json` only: the time field, a dotted path (default: detected). */
  readonly timeField?: string | undefined;
  /** `json` only: how the time field is read (default `auto`). */
  readonly timeFormat?: JsonTimeFormat | undefined;
}

/** The formats {@link createFormat} builds. */
export const FORMAT_NAMES: readonly FormatName[] = ['clf', 'json', 'alb'];

/**
 * A new {@link LineFormat} for the format `name`, with `options`.
 *
 * @throws {RateWardenTypeError} when `name` is not a string, `options` not an object, or an
 *   option has the wrong type (see {@link JsonLinesFormat} for the JSON options).
 * @throws {RateWardenRangeError} when `name` is not `clf`, `json` or `alb`; when `key` is not
 *   `host` or `user` for `clf`; when an option is given to a format it does not apply to
 *   (`timeField` or `timeFormat` for `clf` or `alb`, `key` for `alb`); when a JSON option is
 *   out of its range.
 */
export function createFormat(name: FormatName, options: FormatOptions = {}): LineFormat {
  const expectedName = 'one of "clf", "json", "alb"';
  if (typeof name !== 'string') throw typeError('format', expectedName, name);
  checkObject('options', options, 'a FormatOptions object');
  const { key, timeField, timeFormat } = options;
  switch (name) {
    case 'clf': {
      notFor('timeField', timeField, name);
      notFor('timeFormat', timeFormat, name);
      if (key !== undefined && key !== 'host' && key !== 'user') {
        const expected = '"host" or "user" with the clf format';
        if (typeof key !== 'string') throw typeError('key', expected, key);
        throw rangeError('key', expected, key);
      }
      return new ClfFormat(key);
    }
    case 'json':
      return new JsonLinesFormat({ keyField: key, timeField, timeFormat });
    case 'alb':
      notFor('key', key, name);
      notFor('timeField', timeField, name);
      notFor('timeFormat', timeFormat, name);
      return new AlbFormat();
    default:
      throw rangeError('format', expectedName, name);
  }
}

/** Throws when option `option` is given to format `name`, which has no such option. */
function notFor(option: string, value: unknown, name: FormatName): void {
  if (value !== undefined) throw rangeError(option, `undefined with the ${name} format`, value);
}
