/**
 * Choosing a format: {@link detectFormat} tells the format of a log from one of its lines (for
 * `--format auto`), and {@link createFormat} builds the {@link LineFormat} of a format by name,
 * checking the options against the format's rules — which key kinds and whether the time
 * options apply — read from its entry in the registry (`registry.ts`), for every format alike.
 *
 * @module
 */

import { RateWardenRangeError } from 'ratewarden';
import { checkObject, rangeError, typeError } from '../errors.js';
import type { KeyChoice, KeyKind } from '../key-option.js';
import type { LineFormat } from './format.js';
import { FORMATS, FORMAT_NAMES, PROBE_ORDER, formatEntry, type FormatName, type FormatOptionNames } from './registry.js';

export { FORMAT_NAMES };

/**
 * The format of the line in `bytes[start, end)` (without its `\n`; a trailing `\r` is ignored),
 * or `undefined` when it is none of them: the first format of the registry, in its probes'
 * order, whose probe takes the line (`json`: the first byte that is not a space or a tab is `{`;
 * `alb`: a type word, one space, an ISO 8601 time with a zone; `clf`: the CLF parser accepts the
 * line). Give it the first non-empty line of the input.
 *
 * Reads nothing at or after `end`; allocates nothing.
 */
export function detectFormat(bytes: Uint8Array, start: number, end: number): FormatName | undefined {
  for (const format of PROBE_ORDER) if (format.probe(bytes, start, end)) return format.name;
  return undefined;
}

/**
 * The options of {@link createFormat}; each applies to some formats only (as the format's entry
 * in the registry says), and giving one to a format it does not apply to is an error (so that a
 * `--time-field` given with `--format clf` is not silently ignored).
 */
export interface FormatOptions {
  /**
   * What a request is keyed by (default `{ kind: 'ip' }`): `ip` for every format (`clf`: the
   * client address; `json`: the key field detected among the defaults; `alb`: the client
   * address), `user` for `clf` (`%u`), `field` for `json`.
   */
  readonly key?: KeyChoice | undefined;
  /** `json` only: the time field, a dotted path (default: detected). */
  readonly timeField?: string | undefined;
  /** `json` only: how the time field is read (default `auto`). */
  readonly timeFormat?: string | undefined;
}

/** How the command line names the options of {@link createFormat}, its default `names`. */
export const FORMAT_OPTION_NAMES: FormatOptionNames = { key: '--key', timeField: '--time-field', timeFormat: '--time-format' };

/** How a message writes a key kind after the key option's name. */
const KEY_FORMS: Readonly<Record<KeyKind, string>> = { ip: 'ip', user: 'user', field: 'field:PATH' };

/** The forms of the kinds `keys` as a list: `ip, ip/N, user`. */
function keyForms(keys: readonly KeyKind[]): string {
  return keys.map((kind) => (kind === 'ip' ? 'ip, ip/N' : KEY_FORMS[kind])).join(', ');
}

/** `a JSON-lines log`, `a JSON-lines log or an AWS ALB log`: the titles of the formats `has` holds for. */
function titlesWhere(has: (format: (typeof FORMATS)[number]) => boolean): string {
  return FORMATS.filter(has)
    .map((f) => f.title)
    .join(' or ');
}

/**
 * A new {@link LineFormat} for the format `name`, with `options`; errors name the options by
 * `names` (default: as the command line does, `--key`, `--time-field`, `--time-format`).
 *
 * @throws {RateWardenTypeError} when `name` is not a string, `options` not an object, `key` not
 *   a key choice, or an option has the wrong type (see `JsonLinesFormat` for the JSON options).
 * @throws {RateWardenRangeError} when `name` is not a format of the registry; when an option is
 *   given to a format it does not apply to (a key kind not among the entry's `keys`, a time
 *   option to a format without `timeFormats`), or `timeFormat` is not one of the entry's; when
 *   the parser finds an option out of its range (a time field's empty segment).
 */
export function createFormat(name: FormatName, options: FormatOptions = {}, names: FormatOptionNames = FORMAT_OPTION_NAMES): LineFormat {
  const expectedName = `one of ${FORMAT_NAMES.map((n) => `"${n}"`).join(', ')}`;
  if (typeof name !== 'string') throw typeError('format', expectedName, name);
  checkObject('options', options, 'a FormatOptions object');
  const format = formatEntry(name);
  if (format === undefined) throw rangeError('format', expectedName, name);
  const key: KeyChoice = options.key ?? { kind: 'ip' };
  const kind: unknown = typeof key === 'object' && (key as KeyChoice | null) !== null ? key.kind : undefined;
  if (typeof kind !== 'string' || !Object.hasOwn(KEY_FORMS, kind)) {
    throw typeError(names.key, 'a key choice: { kind: "ip" }, { kind: "user" } or { kind: "field", path }', key);
  }
  const { timeField, timeFormat } = options;
  if (!format.keys.includes(key.kind)) {
    const form = `${names.key} ${KEY_FORMS[key.kind]}`;
    throw new RateWardenRangeError(
      `\`${form}\` is for ${titlesWhere((f) => f.keys.includes(key.kind))}; this is ${format.title} (keys: ${keyForms(format.keys)})`,
    );
  }
  const times = format.timeFormats;
  if ((timeField !== undefined || timeFormat !== undefined) && times === undefined) {
    throw new RateWardenRangeError(
      `\`${names.timeField}\` and \`${names.timeFormat}\` are for ${titlesWhere((f) => f.timeFormats !== undefined)}; this is ${format.title}`,
    );
  }
  if (timeFormat !== undefined && times !== undefined && !times.includes(timeFormat)) {
    throw rangeError(names.timeFormat, `one of ${times.join(', ')} with ${format.title}`, timeFormat);
  }
  return format.create({ key, timeField, timeFormat }, names);
}
