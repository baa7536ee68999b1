/**
 * The options that say how a log is read and keyed, shared by `replay` and `suggest`
 * (`--format`, `--key`, `--time-field`, `--time-format`), turned into {@link LoadOptions}: a
 * format, or with `--format auto` (the default) a function that picks it from the first
 * non-empty line that `detectFormat` recognises (a first line in no format, such as the tail of
 * a cut line, is malformed and the next one is tried; CLF when no line is recognised). Which
 * options apply to which format is the format registry's (`formats/registry.ts`), checked by
 * `createFormat`, whose errors name the options as the command line does.
 *
 * @module
 */

import { RateWardenRangeError, RateWardenTypeError } from 'ratewarden';
import { FORMAT_OPTION_NAMES, createFormat, detectFormat } from './formats/detect.js';
import type { LineFormat } from './formats/format.js';
import type { FormatName } from './formats/registry.js';
import type { KeyChoice } from './key-option.js';
import type { LoadOptions } from './load-requests.js';
import { FORMAT_NAMES, TIME_FORMATS, UsageError, keyOption, lowerFirst, type ParsedArgs } from './options.js';

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
  const make = (name: FormatName): LineFormat => formatFor(name, key, timeField, timeFormat);
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

/**
 * The format `name` with the command line's key and time options, or the usage error that says
 * why not: `createFormat`'s own, which names the options as the command line does.
 */
function formatFor(name: FormatName, key: KeyChoice, timeField: string | undefined, timeFormat: string | undefined): LineFormat {
  try {
    return createFormat(name, { key, timeField, timeFormat }, FORMAT_OPTION_NAMES);
  } catch (error) {
    if (error instanceof RateWardenRangeError || error instanceof RateWardenTypeError) throw new UsageError(lowerFirst(error.message));
    throw error;
  }
}
