/**
 * The options of the `ratewarden` command: the `util.parseArgs` wrapper that turns its errors into
 * one-line {@link UsageError}s, and the check of each option's value (`--top`, `--strategy`, and
 * the limit, `--threshold` per `--window`, which the library's own quota builder checks with its
 * own messages), each throwing the usage error that names its option.
 *
 * @module
 */

import { parseArgs } from 'node:util';
import { RateWardenRangeError, RateWardenTypeError, createQuota, type Quota, type QuotaNames } from 'ratewarden';
import { rangeError, typeError } from './errors.js';
import { FORMAT_NAMES as LINE_FORMAT_NAMES, TIME_FORMAT_NAMES } from './formats/registry.js';
import { KEY_EXPECTED, parseKeyOption, type KeyChoice } from './key-option.js';
import { DURATION_EXPECTED, LIMIT_EXPECTED, parseDuration, parseLimit, type Policy } from './policies.js';
import { REPLAY_DEFAULTS } from './replay.js';
import { STRATEGIES, STRATEGY_NAMES, createStrategy, isStrategyName, type StrategyName } from './strategies.js';

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
  threshold: { type: 'string', multiple: true },
  window: { type: 'string', multiple: true },
  strategy: { type: 'string', multiple: true },
  limit: { type: 'string', multiple: true },
  key: { type: 'string', multiple: true },
  format: { type: 'string', multiple: true },
  'time-field': { type: 'string', multiple: true },
  'time-format': { type: 'string', multiple: true },
  'max-clients-limited': { type: 'string', multiple: true },
  'max-refused': { type: 'string', multiple: true },
  report: { type: 'string', multiple: true },
  top: { type: 'string', multiple: true },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
} as const;

/**
 * The options that take one value: given twice, they are a usage error (never the last one
 * silently). `--window`, `--strategy` and `--limit` may be repeated (the commands say when).
 */
const SINGLE = ['threshold', 'key', 'format', 'time-field', 'time-format', 'max-clients-limited', 'max-refused', 'report', 'top'] as const;
type SingleOption = (typeof SINGLE)[number];

type RawArgs = ReturnType<typeof parseArgsStrict>;

/** The options and operands of a command line: each option of one value as that value. */
export interface ParsedArgs {
  readonly values: Omit<RawArgs['values'], SingleOption> & Readonly<Partial<Record<SingleOption, string | undefined>>>;
  readonly positionals: string[];
}

/**
 * `util.parseArgs`, its errors turned into one-line usage errors.
 *
 * @throws {UsageError} for an unknown option, an option without its value or a flag with one.
 */
export function parseCommandArgs(args: readonly string[]): ParsedArgs {
  let raw: RawArgs;
  try {
    raw = parseArgsStrict(args);
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
  const values: Record<string, unknown> = { ...raw.values };
  for (const name of SINGLE) values[name] = single(`--${name}`, raw.values[name], 'it takes one value');
  return { values: values, positionals: raw.positionals };
}

function parseArgsStrict(args: readonly string[]) {
  return parseArgs({ args: [...args], options: OPTIONS, strict: true, allowPositionals: true });
}

/** What each option with a value expects, as the usage errors say it. */
const EXPECTED: Record<string, string> = {
  '--threshold': 'a positive safe integer',
  '--top': 'a non-negative safe integer',
  '--window': 'a number of seconds from 0.001 to 1000000000, in whole milliseconds, or a duration such as 90s, 1m or 1h',
  '--strategy': `one of ${STRATEGY_NAMES.join(', ')}`,
  '--limit': LIMIT_EXPECTED,
  '--key': KEY_EXPECTED,
  '--format': `one of auto, ${LINE_FORMAT_NAMES.join(', ')}`,
  '--time-field': 'a JSON field, a dotted path such as ts or request.time',
  '--time-format': `one of ${TIME_FORMAT_NAMES.join(', ')}`,
  '--max-clients-limited': 'a percentage from 0% to 100%, such as 1%',
  '--max-refused': 'a percentage from 0% to 100%, such as 0.1%',
  '--report': 'the path of an HTML file to write',
};

/** The formats `--format` takes: `auto`, then each format's name. */
export const FORMAT_NAMES: readonly string[] = ['auto', ...LINE_FORMAT_NAMES];

/** The time formats `--time-format` takes (each format's that takes one, from the registry). */
export const TIME_FORMATS: readonly string[] = TIME_FORMAT_NAMES;

/** Validates a value for `option` and throws the usage error that names it when invalid. */
function checkOptionValue(option: string, value: string): void {
  if (option === '--threshold') quotaOption(value, undefined, REPLAY_DEFAULTS.strategy);
  else if (option === '--top') integerOption(option, value, 0, 0);
  else if (option === '--window') quotaOption(undefined, value, REPLAY_DEFAULTS.strategy);
  else if (option === '--strategy') strategyOption(value);
  else if (option === '--limit') limitOptions([value], REPLAY_DEFAULTS.strategy);
  else if (option === '--key') keyOption(value);
  else if (option === '--max-clients-limited' || option === '--max-refused') percentOption(option, value);
}

/**
 * The `--limit` options: each `N/DURATION[:STRATEGY]`, its strategy `fallback` when it names
 * none, its quota built by the library's quota builder (see {@link quotaOption}), the quota's
 * errors naming `N in --limit VALUE` and `DURATION in --limit VALUE`.
 *
 * @throws {UsageError} naming `--limit` and the value when one is not a limit, or with the
 *   quota's message (naming the limit) when its threshold or window is out of range.
 */
export function limitOptions(values: readonly string[], fallback: StrategyName): Policy[] {
  const seen = new Map<string, string>();
  const policies = values.map((value): Policy => {
    const parts = parseLimit(value);
    if (typeof parts === 'string') throw new UsageError(`expected \`--limit\` to be ${LIMIT_EXPECTED}, got \`${value}\`: ${parts}`);
    const strategy = parts.strategy ?? fallback;
    const names: QuotaNames = { threshold: `N in --limit ${value}`, windowSeconds: `DURATION in --limit ${value}` };
    const larger = (uncapped: readonly string[]): string => `for larger limits end it with ${listed(uncapped.map((name) => `\`:${name}\``), 'or')}`;
    return { quota: checkedQuota(parts.threshold, parts.windowSeconds, strategy, names, larger), strategy };
  });
  for (const [i, { quota, strategy }] of policies.entries()) {
    const id = `${quota.threshold}/${quota.windowSeconds}:${strategy}`;
    const same = seen.get(id);
    if (same !== undefined) {
      throw new UsageError(`\`--limit ${values[i] ?? ''}\` is the same policy as \`--limit ${same}\`: give each policy once`);
    }
    seen.set(id, values[i] ?? '');
  }
  return policies;
}

/**
 * The `--key` option as a {@link KeyChoice} (`ip/64` when absent).
 *
 * @throws {UsageError} naming `--key`, what it expects and the value received.
 */
export function keyOption(value: string | undefined): KeyChoice {
  const choice = parseKeyOption(value);
  if (choice === undefined) throw new UsageError(`expected \`--key\` to be ${KEY_EXPECTED}, got \`${value ?? ''}\``);
  return choice;
}

/**
 * A percentage option (`--max-refused 0.1%`) as a share from 0 to 1; `undefined` when absent.
 *
 * @throws {UsageError} naming the option when `value` is not a percentage from 0% to 100%.
 */
export function percentOption(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const match = /^((?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))%$/.exec(value);
  const percent = match === null ? Number.NaN : Number(match[1]);
  if (!(percent >= 0 && percent <= 100)) {
    throw new UsageError(`expected \`${name}\` to be ${EXPECTED[name] ?? 'a percentage'}, got \`${value}\``);
  }
  return percent / 100;
}

/**
 * A list of windows (`suggest --window 60s --window 1h`) in **seconds**, each a duration parsed
 * once and checked as a quota's window for every one of `strategies` (by `createQuota`, naming
 * `--window`); `fallback` when none is given.
 *
 * @throws {UsageError} naming `--window` and the value when one is not a duration or out of range.
 */
export function windowsOption(values: readonly string[] | undefined, fallback: number, strategies: readonly StrategyName[]): number[] {
  if (values === undefined || values.length === 0) return [fallback];
  return values.map((value) => {
    const seconds = parseDuration(value);
    if (seconds === undefined) throw new UsageError(`expected \`--window\` to be ${DURATION_EXPECTED}, got \`${value}\``);
    let windowSeconds = seconds;
    for (const strategy of strategies) windowSeconds = checkedQuota(1, seconds, strategy, QUOTA_NAMES, larger).windowSeconds;
    return windowSeconds;
  });
}

/** One value of an option that may be given once only: the last, after checking there is one. */
export function single(name: string, values: readonly string[] | undefined, why: string): string | undefined {
  if (values === undefined || values.length === 0) return undefined;
  if (values.length > 1) throw new UsageError(`\`${name}\` is given ${values.length} times: ${why}`);
  return values[0];
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

/**
 * A library error message as a usage error says it, after `ratewarden: `: `Expected …` →
 * `expected …` (its first letter only; the words are the validator's).
 */
export function lowerFirst(message: string): string {
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

/** The hint after a `--threshold` above its strategy's cap: the strategies without one. */
const larger = (uncapped: readonly string[]): string => `for larger limits use \`--strategy\` ${listed(uncapped, 'or')}`;

/** `a, b or c`. */
function listed(items: readonly string[], last: 'and' | 'or'): string {
  return items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} ${last} ${items.at(-1) ?? ''}`;
}

/**
 * The policy of the command line's `--threshold` requests per `--window` for `strategy`: its
 * quota built once by the library's one quota builder (`createQuota`), so that the command checks
 * a limit exactly as a `RateLimiter` does and says what is wrong in the same words, naming
 * `--threshold` and `--window`; the defaults when absent. `--window` is parsed once: a duration
 * (`90s`), else a decimal number of seconds, else text (a type error). A threshold written as a
 * decimal number is checked as that number; anything else as the text it is.
 *
 * @throws {UsageError} with the quota's message naming `--threshold` or `--window` (a threshold
 *   above the strategy's `maxThreshold` also names the strategies without a cap).
 */
export function quotaOption(threshold: string | undefined, window: string | undefined, strategy: StrategyName): Policy {
  const windowSeconds = window === undefined ? REPLAY_DEFAULTS.windowSeconds : (parseDuration(window) ?? numeric(window));
  if (typeof windowSeconds === 'string') {
    throw new UsageError(lowerFirst(typeError('--window', EXPECTED['--window'] ?? 'a duration', windowSeconds).message));
  }
  const quota = checkedQuota(threshold === undefined ? REPLAY_DEFAULTS.threshold : numeric(threshold), windowSeconds, strategy, QUOTA_NAMES, larger);
  return { quota, strategy };
}

/**
 * The quota of `threshold` per `windowSeconds` for `strategy`, built by `createQuota`, whose
 * errors name the fields by `names`; a threshold above the strategy's cap adds `hint(the
 * strategies without one)` to the message.
 */
function checkedQuota(
  threshold: number | string,
  windowSeconds: number | string,
  strategy: StrategyName,
  names: QuotaNames,
  hint: (uncapped: readonly string[]) => string,
): Quota {
  const bounds = createStrategy(strategy);
  const options = { threshold, windowSeconds };
  try {
    return createQuota(options as { threshold: number; windowSeconds: number }, bounds, names);
  } catch (error) {
    if (!(error instanceof RateWardenTypeError || error instanceof RateWardenRangeError)) throw error;
    const message = lowerFirst(error.message);
    const max = bounds.maxThreshold;
    const capped = max !== undefined && typeof options.threshold === 'number' && Number.isSafeInteger(options.threshold) && options.threshold > max;
    if (!capped) throw new UsageError(message);
    const uncapped = STRATEGIES.filter((s) => s.create().maxThreshold === undefined).map((s) => s.name);
    throw new UsageError(`${message}; ${hint(uncapped)}`);
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
