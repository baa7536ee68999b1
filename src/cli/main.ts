/**
 * The `ratewarden` command: parses the arguments, runs the subcommand, prints errors as one line
 * on stderr and sets the exit code: 0 on success, 2 for a usage or input error, 1 for an
 * unexpected failure.
 *
 * @module
 */

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ReplayInputError } from './input.js';
import { createProgress } from './progress.js';
import { REPLAY_DEFAULTS, replay, type ReplaySummary } from './replay.js';
import { formatSummary, summaryToJson, type InputLabel } from './report.js';
import { STRATEGY_NAMES, createStrategy, isStrategyName, type StrategyName } from './strategies.js';

/** The built-in sample, shipped in the package next to `dist/`. */
const SAMPLE_URL = new URL('../data/access-combined.log.gz', import.meta.url);

/** A few words on each strategy, for `--help`. */
const STRATEGY_HELP: Readonly<Record<StrategyName, string>> = {
  'sliding-window-log': 'exact: at most N in any window; N up to 1048576',
  'sliding-window-counter': 'this window + the last one, weighted; an estimate',
  'fixed-window': 'a counter reset every window; 2N at a boundary',
  'token-bucket': 'N tokens, refilled at N per window; bursts of N',
  gcra: 'one timestamp per client; decides as token-bucket',
};

const TOP_HELP = `Usage: ratewarden <command> [options]

Commands:
  replay [FILE]    replay an access log through a rate limit and report what it would have done

Options:
  -h, --help       show help (also: ratewarden replay --help)
  --version        show the version

Run \`ratewarden replay --help\` for the options of replay.
`;

const REPLAY_HELP = `Usage: ratewarden replay [FILE] [--threshold N] [--window SECONDS] [--strategy NAME] [--json] [--top N]

Replays an access log (NCSA Common or Combined Log Format) through a per-client
rate limit (by default the exact sliding-window log), in timestamp order, and
reports how many requests would have been allowed and rejected. The client is
the first field of each line.

Arguments:
  FILE                path of the log; \`-\` reads stdin; gzip data (a .gz file, or
                      gzip on stdin) is recognised by its first bytes and
                      gunzipped. Default: the built-in sample (10,000 requests).

Options:
  --threshold N       requests allowed per window and client, a positive integer
                      (default ${REPLAY_DEFAULTS.threshold})
  --window SECONDS    the window length in seconds, a number greater than 0;
                      fractions allowed (default ${REPLAY_DEFAULTS.windowSeconds})
  --strategy NAME     the algorithm (default ${REPLAY_DEFAULTS.strategy}):
${STRATEGY_NAMES.map((name) => `    ${name.padEnd(24)}${STRATEGY_HELP[name]}`).join('\n')}
  --top N             how many of the most-limited clients to list, an integer
                      >= 0 (default ${REPLAY_DEFAULTS.top})
  --json              print one JSON object instead of the report
  -h, --help          show this help

Malformed lines are counted and the first ${REPLAY_DEFAULTS.maxMalformedExamples} are reported on stderr; empty lines
before the last non-empty one count as malformed, empty lines at the end are ignored.
Exit status: 0 on success, 2 for a bad option or an unreadable file, 1 otherwise.
`;

const OPTIONS = {
  threshold: { type: 'string' },
  window: { type: 'string' },
  strategy: { type: 'string' },
  top: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
} as const;

/** A usage or input error: printed as one line, exit code 2. */
class UsageError extends Error {}

/** Where the command reads and writes; the process streams by default. */
interface CommandIo {
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown; readonly isTTY?: boolean | undefined };
  readonly stdin: AsyncIterable<Uint8Array | string>;
}

/**
 * Runs the `ratewarden` command with `args` (without the node and script paths).
 *
 * @returns the exit code: 0 on success, 2 for a usage or input error, 1 for anything else.
 *   Never throws: every error is printed as one line on stderr.
 */
async function main(args: readonly string[], io: CommandIo = processIo()): Promise<number> {
  try {
    return await run(args, io);
  } catch (error) {
    if (error instanceof UsageError || error instanceof ReplayInputError) {
      io.stderr.write(`ratewarden: ${error.message}\n`);
      return 2;
    }
    const message = error instanceof Error ? error.message : String(error);
    io.stderr.write(`ratewarden: unexpected error: ${firstLine(message)}\n`);
    return 1;
  }
}

async function run(args: readonly string[], io: CommandIo): Promise<number> {
  const { values, positionals } = parse(args);
  if (values.version === true) {
    io.stdout.write(`${readVersion()}\n`);
    return 0;
  }
  const [command, ...operands] = positionals;
  if (command === undefined) {
    if (values.help === true) {
      io.stdout.write(TOP_HELP);
      return 0;
    }
    throw new UsageError('missing command: expected `replay` (see `ratewarden --help`)');
  }
  if (command !== 'replay') {
    throw new UsageError(`unknown command \`${command}\`: expected \`replay\` (see \`ratewarden --help\`)`);
  }
  if (values.help === true) {
    io.stdout.write(REPLAY_HELP);
    return 0;
  }
  if (operands.length > 1) {
    throw new UsageError(
      `expected at most one FILE, got ${operands.length}: ${operands.map((o) => `\`${o}\``).join(', ')}`,
    );
  }

  const threshold = integerOption('--threshold', values.threshold, 1, REPLAY_DEFAULTS.threshold);
  const top = integerOption('--top', values.top, 0, REPLAY_DEFAULTS.top);
  const windowSeconds = windowOption(values.window);
  const strategy = strategyOption(values.strategy);
  checkThresholdFor(strategy, threshold);
  const json = values.json === true;

  const operand = operands[0];
  let label: InputLabel;
  let input: string | AsyncIterable<Uint8Array | string>;
  if (operand === undefined) {
    input = fileURLToPath(SAMPLE_URL);
    label = { file: input, sample: true };
  } else if (operand === '-') {
    input = io.stdin;
    label = { file: '-', sample: false };
  } else {
    input = operand;
    label = { file: operand, sample: false };
  }

  const summary: ReplaySummary = await replay({
    input,
    threshold,
    windowSeconds,
    strategy,
    top,
    progress: !json && io.stderr.isTTY === true ? createProgress(io.stderr) : undefined,
  });

  for (const example of summary.malformedExamples) {
    io.stderr.write(`ratewarden: line ${example.line}: malformed (${example.reason}): ${example.text}\n`);
  }
  const unreported = summary.malformed - summary.malformedExamples.length;
  if (unreported > 0) {
    io.stderr.write(
      `ratewarden: ${unreported} more malformed line${unreported === 1 ? '' : 's'} not shown ` +
        `(${summary.malformed} in all)\n`,
    );
  }
  io.stdout.write(
    json ? `${JSON.stringify(summaryToJson(summary, label))}\n` : formatSummary(summary, label),
  );
  if (summary.requests === 0 && summary.malformed > 0) {
    io.stderr.write(
      'ratewarden: no line of the input is in the Common or Combined Log Format ' +
        '(`host ident authuser [dd/Mon/yyyy:HH:MM:SS +zzzz] "request" status bytes`)\n',
    );
    return 1;
  }
  if (summary.lines === 0) io.stderr.write('ratewarden: the input is empty\n');
  return 0;
}

/** `util.parseArgs`, its errors turned into one-line usage errors. */
function parse(args: readonly string[]): ReturnType<typeof parseArgsStrict> {
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

/** An integer option: digits only, at least `min`, at most `Number.MAX_SAFE_INTEGER`. */
function integerOption(name: string, value: string | undefined, min: number, fallback: number): number {
  if (value === undefined) return fallback;
  const number = /^[0-9]+$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(number) || number < min) {
    throw new UsageError(`expected \`${name}\` to be ${EXPECTED[name]}, got \`${value}\``);
  }
  return number;
}

/** The `--window` option: a decimal number of seconds, finite and greater than 0. */
function windowOption(value: string | undefined): number {
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

/** The `--strategy` option: one of the strategy names. */
function strategyOption(value: string | undefined): StrategyName {
  if (value === undefined) return REPLAY_DEFAULTS.strategy;
  if (!isStrategyName(value)) {
    throw new UsageError(`expected \`--strategy\` to be ${EXPECTED['--strategy']}, got \`${value}\``);
  }
  return value;
}

/**
 * Checks `threshold` against the strategy's largest (`maxThreshold`: 1,048,576 for the
 * sliding-window log, which stores a timestamp per request), so that a threshold too large for
 * the strategy is a usage error naming `--threshold` rather than an unexpected error.
 */
function checkThresholdFor(strategy: StrategyName, threshold: number): void {
  const max = createStrategy(strategy).maxThreshold;
  if (max === undefined || threshold <= max) return;
  const uncapped = STRATEGY_NAMES.filter((name) => createStrategy(name).maxThreshold === undefined);
  const alternatives = `${uncapped.slice(0, -1).join(', ')} or ${uncapped.at(-1) ?? ''}`;
  throw new UsageError(
    `expected \`--threshold\` to be at most ${max} with the ${strategy} strategy, got \`${threshold}\` ` +
      `(for larger limits use \`--strategy\` ${alternatives})`,
  );
}

/** The package version, read from the package.json next to `dist/`. */
function readVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      version?: unknown;
    };
    return typeof pkg.version === 'string' ? pkg.version : 'unknown';
  } catch {
    return 'unknown';
  }
}

function firstLine(text: string): string {
  const newline = text.indexOf('\n');
  return newline === -1 ? text : text.slice(0, newline);
}

function processIo(): CommandIo {
  return { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin };
}

// A closed stdout (`| head`) ends the command quietly instead of crashing.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});
void main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
