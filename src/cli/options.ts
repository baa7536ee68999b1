/**
 * The options of the `ratewarden` command: the `util.parseArgs` wrapper that turns its errors into
 * one-line {@link UsageError}s, and the check of each option's value (`--threshold`, `--top`,
 * `--window`, `--strategy`, and the threshold against the strategy's largest), each throwing the
 * usage error that names its option.
 *
 * @module
 */

import { parseArgs } from 'node:util';
import { REPLAY_DEFAULTS } from './replay.js';
import { STRATEGY_NAMES, createStrategy, isStrategyName, type StrategyName } from './strategies.js';

/** A usage or input error: printed as one line, exit code 2. */
export class UsageError extends Error {}

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
        if (value !== undefined) checkOptionValue(option, value);
        throw new UsageError(`option \`${option}\` needs a value; write \`${option}=${value ?? ''}\``);
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
  '--threshold': 'a positive integer up to 9007199254740991',
  '--top': 'a non-negative integer',
  '--window': 'a finite number of seconds greater than 0',
  '--strategy': `one of ${STRATEGY_NAMES.join(', ')}`,
};

/** Validates a value for `option` and throws the usage error that names it when invalid. */
function checkOptionValue(option: string, value: string): void {
  if (option === '--threshold') integerOption(option, value, 1, 0);
  else if (option === '--top') integerOption(option, value, 0, 0);
  else if (option === '--window') windowOption(value);
  else if (option === '--strategy') strategyOption(value);
}

/**
 * An integer option (`--threshold`, `--top`): digits only, at least `min`, at most
 * `Number.MAX_SAFE_INTEGER`; `fallback` when absent.
 *
 * @throws {UsageError} naming `name` when `value` is not such an integer.
 */
export function integerOption(name: string, value: string | undefined, min: number, fallback: number): number {
  if (value === undefined) return fallback;
  const number = /^[0-9]+$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(number) || number < min) {
    throw new UsageError(`expected \`${name}\` to be ${EXPECTED[name]}, got \`${value}\``);
  }
  return number;
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

// The limit's own checks: the window, and the threshold against the strategy. Each is one
// function, called once by the command, so that a shared check of the limit can replace them.

/**
 * The `--window` option: a decimal number of seconds, finite and greater than 0, at least the
 * limiter's minimum; the default window when absent.
 *
 * @throws {UsageError} naming `--window` when `value` is not such a number.
 */
export function windowOption(value: string | undefined): number {
  if (value === undefined) return REPLAY_DEFAULTS.windowSeconds;
  const number = /^(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$/.test(value)
    ? Number(value)
    : NaN;
  if (!(number > 0) || !Number.isFinite(number * 1000)) {
    throw new UsageError(`expected \`--window\` to be ${EXPECTED['--window']}, got \`${value}\``);
  }
  if (number < MIN_WINDOW_SECONDS) {
    // The limiter's own minimum: checked here so that it is a usage error, not an unexpected one.
    throw new UsageError(
      `expected \`--window\` to be at least ${MIN_WINDOW_SECONDS} (one millisecond), got \`${value}\``,
    );
  }
  return number;
}

/** The smallest window the limiter accepts, in seconds. */
const MIN_WINDOW_SECONDS = 0.001;

/**
 * Checks `threshold` against the strategy's largest (`maxThreshold`: 1,048,576 for the
 * sliding-window log, which stores a timestamp per request), so that a threshold too large for
 * the strategy is a usage error naming `--threshold` rather than an unexpected error.
 *
 * @throws {UsageError} naming `--threshold` and the strategies without a cap when it is too large.
 */
export function checkThresholdFor(strategy: StrategyName, threshold: number): void {
  const max = createStrategy(strategy).maxThreshold;
  if (max === undefined || threshold <= max) return;
  const uncapped = STRATEGY_NAMES.filter((name) => createStrategy(name).maxThreshold === undefined);
  const alternatives = `${uncapped.slice(0, -1).join(', ')} or ${uncapped.at(-1) ?? ''}`;
  throw new UsageError(
    `expected \`--threshold\` to be at most ${max} with the ${strategy} strategy, got \`${threshold}\` ` +
      `(for larger limits use \`--strategy\` ${alternatives})`,
  );
}

/** The first line of `text`: an error is printed as one line. */
export function firstLine(text: string): string {
  const newline = text.indexOf('\n');
  return newline === -1 ? text : text.slice(0, newline);
}
