/**
 * The options of the `ratewarden` command: the `util.parseArgs` wrapper that turns its errors into
 * one-line {@link UsageError}s, and the check of each option's value (`--top`, `--strategy`, and
 * the limit, `--threshold` per `--window`, which the library's own quota builder checks with its
 * own messages), each throwing the usage error that names its option.
 *
 * @module
 */

import { parseArgs } from 'node:util';
import { RateWardenRangeError, RateWardenTypeError, rangeError, typeError } from '../errors.js';
import { createQuota, type Quota, type QuotaNames } from '../quota.js';
import { REPLAY_DEFAULTS } from './replay.js';
import { STRATEGY_NAMES, createStrategy, isStrategyName, type StrategyName } from './strategies.js';

/** A usage or input error: printed as one line, exit code {@link EXIT_CODES}`.error` (2). */
export class UsageError extends Error {}

/**
 * The exit codes of `ratewarden` (listed by `ratewarden replay --help` and the README), in the
 * manner of grep and diff: 0 and 1 both print a report, 2 prints none.
 */
export const EXIT_CODES = {
  /** The report is printed; at least one request was replayed (or help or the version shown). */
  replayed: 0,
  /** The report is printed, but nothing was replayed: the input is empty or no line is in the log format. */
  nothingReplayed: 1,
  /**
   * No report: a bad command line, an unreadable input (missing file, directory, corrupt gzip
   * data), a report that cannot be written (stdout on a full disk), or an unexpected failure.
   */
  error: 2,
} as const;

const OPTIONS = {
  threshold: { type: 'string' },
  window: { type: 'string' },
  strategy: { type: 'string' },
  top: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
} as const;

/** The options and operands of a command line, as `util.parseArgs` gives them. */
export type ParsedArgs = ReturnType<typeof parseArgsStrict>;

/**
 * `util.parseArgs`, its errors turned into one-line usage errors.
 *
 * @throws {UsageError} for an unknown option, an option without its value or a flag with one.
 */
export function parseCommandArgs(args: readonly string[]): ParsedArgs {
  try {
    return parseArgsStrict(args);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const message = error instanceof Error ? error.message : String(error);
    const option = /'(-[^' ]*)/.exec(message)?.[1] ?? '';
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
      throw new UsageError(`unknown option \`${option}\` (see \`ratewarden replay --help\`)`);
    }
    if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
      if (message.includes('ambiguous')) {
        // `--window -1`: parseArgs will not take a value starting with a dash after a space.
        const at = args.indexOf(option);
        const value = at >= 0 ? args[at + 1] : undefined;
        // `--strategy --json`: the value was forgotten, the next word is an option.
        if (value === undefined || value.startsWith('--') || value === '-h') {
          throw new UsageError(
            `option \`${option}\` needs a value (${EXPECTED[option] ?? 'see --help'}), got the option \`${value ?? ''}\``,
          );
        }
        checkOptionValue(option, value);
        throw new UsageError(`option \`${option}\` needs a value; write \`${option}=${value}\``);
      }
      if (message.includes('argument missing')) {
        throw new UsageError(`option \`${option}\` needs a value (${EXPECTED[option] ?? 'see --help'})`);
      }
      if (message.includes('does not take an argument')) {
        throw new UsageError(`option \`${option}\` does not take a value`);
      }
    }
    throw new UsageError(firstLine(message));
  }
}

function parseArgsStrict(args: readonly string[]) {
  return parseArgs({ args: [...args], options: OPTIONS, strict: true, allowPositionals: true });
}

/** What each option with a value expects, as the usage errors say it. */
const EXPECTED: Record<string, string> = {
  '--threshold': 'a positive safe integer',
  '--top': 'a non-negative safe integer',
  '--window': 'a number of seconds from 0.001 to 1000000000, in whole milliseconds',
  '--strategy': `one of ${STRATEGY_NAMES.join(', ')}`,
};

/** Validates a value for `option` and throws the usage error that names it when invalid. */
function checkOptionValue(option: string, value: string): void {
  if (option === '--threshold') quotaOption(value, undefined, REPLAY_DEFAULTS.strategy);
  else if (option === '--top') integerOption(option, value, 0, 0);
  else if (option === '--window') quotaOption(undefined, value, REPLAY_DEFAULTS.strategy);
  else if (option === '--strategy') strategyOption(value);
}

/**
 * An integer option (`--top`): a decimal number as `--threshold` takes it (`10`, `1e3`), a safe
 * integer of at least `min`; `fallback` when absent.
 *
 * @throws {UsageError} naming `name`, what it expects and the value received (in the words of
 *   the library's own option errors) when `value` is not such an integer.
 */
export function integerOption(name: string, value: string | undefined, min: number, fallback: number): number {
  if (value === undefined) return fallback;
  const number = numeric(value);
  const expected = EXPECTED[name] ?? `an integer of at least ${min}`;
  if (typeof number !== 'number') throw new UsageError(lowerFirst(typeError(name, expected, number).message));
  if (!Number.isSafeInteger(number) || number < min) {
    throw new UsageError(lowerFirst(rangeError(name, expected, number).message));
  }
  return number;
}

/** A library error message as a usage error says it: `Expected …` → `expected …`. */
function lowerFirst(message: string): string {
  return `${message.charAt(0).toLowerCase()}${message.slice(1)}`;
}

/**
 * The `--strategy` option: one of the strategy names; the default strategy when absent.
 *
 * @throws {UsageError} naming `--strategy` when `value` is not one of {@link STRATEGY_NAMES}.
 */
export function strategyOption(value: string | undefined): StrategyName {
  if (value === undefined) return REPLAY_DEFAULTS.strategy;
  if (!isStrategyName(value)) {
    throw new UsageError(`expected \`--strategy\` to be ${EXPECTED['--strategy']}, got \`${value}\``);
  }
  return value;
}

/** How the quota's messages name its two fields on the command line. */
const QUOTA_NAMES: QuotaNames = { threshold: '--threshold', windowSeconds: '--window' };

/**
 * The limit of the command line, `--threshold` requests per `--window` seconds for `strategy`,
 * built by the library's one quota builder (`createQuota`), so that the command checks a limit
 * exactly as a `RateLimiter` does and says what is wrong in the same words; the defaults when
 * absent. A value written as a decimal number is checked as that number; anything else as the
 * text it is.
 *
 * @throws {UsageError} with the quota's message naming `--threshold` or `--window` (a threshold
 *   above the strategy's `maxThreshold` also names the strategies without a cap).
 */
export function quotaOption(threshold: string | undefined, window: string | undefined, strategy: StrategyName): Quota {
  const bounds = createStrategy(strategy);
  const options = {
    threshold: threshold === undefined ? REPLAY_DEFAULTS.threshold : numeric(threshold),
    windowSeconds: window === undefined ? REPLAY_DEFAULTS.windowSeconds : numeric(window),
  };
  try {
    return createQuota(options as { threshold: number; windowSeconds: number }, bounds, QUOTA_NAMES);
  } catch (error) {
    if (!(error instanceof RateWardenTypeError || error instanceof RateWardenRangeError)) throw error;
    const message = lowerFirst(error.message);
    const max = bounds.maxThreshold;
    const capped = max !== undefined && typeof options.threshold === 'number' && Number.isSafeInteger(options.threshold) && options.threshold > max;
    if (!capped) throw new UsageError(message);
    const uncapped = STRATEGY_NAMES.filter((name) => createStrategy(name).maxThreshold === undefined);
    const alternatives = `${uncapped.slice(0, -1).join(', ')} or ${uncapped.at(-1) ?? ''}`;
    throw new UsageError(`${message}; for larger limits use \`--strategy\` ${alternatives}`);
  }
}

/** A decimal number as written (`12`, `-3`, `1.5`, `1e3`) as that number; anything else as the text. */
function numeric(value: string): number | string {
  return /^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$/.test(value) ? Number(value) : value;
}

/** The first line of `text`: an error is printed as one line. */
export function firstLine(text: string): string {
  const newline = text.indexOf('\n');
  return newline === -1 ? text : text.slice(0, newline);
}
