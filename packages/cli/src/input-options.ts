/**
 * The options that say how a log is read and keyed, shared by `replay` and `suggest`
 * (`--format`, `--key`, `--time-field`, `--time-format`), turned into {@link LoadOptions}: a
 * format, or with `--format auto` (the default) a function that picks it from the first
 * non-empty line that `detectFormat` recognises (a first line in no format, such as the tail of
 * a cut line, is malformed and the next one is tried; CLF when no line is recognised).
 *
 * @module
 */

import { RateWardenRangeError, RateWardenTypeError } from 'ratewarden';
import { createFormat, detectFormat, type FormatOptions } from './formats/detect.js';
import type { FormatName, LineFormat } from './formats/format.js';
import type { JsonTimeFormat } from './formats/json-lines.js';
import type { KeyChoice } from './key-option.js';
import { FORMAT_NAMES, TIME_FORMATS, UsageError, keyOption, type ParsedArgs } from './options.js';
import type { LoadOptions } from './load-requests.js';

/**
 * The format and keying of the command line's `--format`, `--key`, `--time-field` and
 * `--time-format`.
 *
 * @throws {UsageError} naming the option for a value it does not take, or a combination that
 *   cannot work (`--key field:PATH` with a CLF log, `--key user` with an ALB log). With `--format
 *   auto`, a combination that does not fit the detected format throws when the first line is
 *   read.
 */
export function loadOptions(values: ParsedArgs['values']): Pick<LoadOptions, 'format' | 'ipv6Subnet'> {
  const key = keyOption(values.key);
  const format = values.format ?? 'auto';
  if (!FORMAT_NAMES.includes(format)) {
    throw new UsageError(`expected \`--format\` to be one of ${FORMAT_NAMES.join(', ')}, got \`${format}\``);
  }
  const timeField = values['time-field'];
  const timeFormat = values['time-format'];
  if (timeFormat !== undefined && !TIME_FORMATS.includes(timeFormat)) {
    throw new UsageError(`expected \`--time-format\` to be one of ${TIME_FORMATS.join(', ')}, got \`${timeFormat}\``);
  }
  const make = (name: FormatName): LineFormat => formatFor(name, key, timeField, timeFormat as JsonTimeFormat | undefined);
  return {
    // A fixed format is built (and its options checked) before anything is read.
    format:
      format === 'auto'
        ? (bytes, start, end) => {
            const detected = detectFormat(bytes, start, end);
            return detected === undefined ? undefined : make(detected);
          }
        : make(format as FormatName),
    ipv6Subnet: key.kind === 'ip' ? key.ipv6Subnet : undefined,
  };
}

/** What the usage errors call each format. */
const FORMAT_TITLES: Readonly<Record<FormatName, string>> = {
  clf: 'a Common/Combined Log Format log',
  json: 'a JSON-lines log',
  alb: 'an AWS ALB log',
};

/** The format `name` with the command line's key and time options, or the usage error that says why not. */
function formatFor(name: FormatName, key: KeyChoice, timeField: string | undefined, timeFormat: JsonTimeFormat | undefined): LineFormat {
  const title = FORMAT_TITLES[name];
  if (name !== 'json' && (timeField !== undefined || timeFormat !== undefined)) {
    throw new UsageError(`\`--time-field\` and \`--time-format\` are for JSON-lines logs; this is ${title}`);
  }
  const options: FormatOptions = { timeField, timeFormat };
  if (name === 'clf') {
    if (key.kind === 'field') throw new UsageError(`\`--key field:PATH\` is for JSON-lines logs; this is ${title} (keys: ip, ip/N, user)`);
    Object.assign(options, { key: key.kind === 'user' ? 'user' : 'host' });
  } else if (name === 'json') {
    if (key.kind === 'user') {
      throw new UsageError(`\`--key user\` is CLF's %u; this is ${title}: give the user's field, such as \`--key field:user_id\``);
    }
    if (key.kind === 'field') Object.assign(options, { key: key.path });
  } else if (key.kind !== 'ip') {
    throw new UsageError(`${title} is keyed by the client address: \`--key ip\` or \`--key ip/N\``);
  }
  try {
    return createFormat(name, options);
  } catch (error) {
    if (error instanceof RateWardenRangeError || error instanceof RateWardenTypeError) {
      const message = error.message.replace(/`keyField`/g, '`--key field:PATH`').replace(/`timeField`/g, '`--time-field`').replace(/`timeFormat`/g, '`--time-format`');
      throw new UsageError(`${message.charAt(0).toLowerCase()}${message.slice(1)}`);
    }
    throw error;
  }
}
