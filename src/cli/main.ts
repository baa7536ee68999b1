/**
 * The `ratewarden` command: parses the arguments, picks the input (a FILE, `-`, piped stdin or
 * the built-in sample), runs the subcommand, prints errors as one line on stderr and sets the
 * exit code ({@link EXIT_CODES}): 0 when requests were replayed, 1 when the input had none (empty,
 * or no line in the log format), 2 for an error (no report). With no FILE, a piped stdin that
 * turns out empty is not an input: the built-in sample is replayed, as stderr says.
 *
 * @module
 */

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { escapeText, toJsonLine } from './escape.js';
import { REPLAY_HELP, TOP_HELP } from './help.js';
import { ReplayInputError, stdinKind, systemErrorReason } from './input.js';
import {
  EXIT_CODES,
  UsageError,
  firstLine,
  integerOption,
  quotaOption,
  parseCommandArgs,
  strategyOption,
} from './options.js';
import { createProgress } from './progress.js';
import { REPLAY_DEFAULTS, replay, type ReplaySummary } from './replay.js';
import { formatSummary, summaryToJson, type InputLabel } from './report.js';

/** The built-in sample, shipped in the package next to `dist/`. */
const SAMPLE_URL = new URL('../data/access-combined.log.gz', import.meta.url);

/** Where the command reads and writes; the process streams by default. */
interface CommandIo {
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown; readonly isTTY?: boolean | undefined };
  readonly stdin: AsyncIterable<Uint8Array | string>;
  /** What stdin is (see `stdinKind`): with no FILE, a pipe or a file is read, anything else is not. */
  readonly stdinKind: () => ReturnType<typeof stdinKind>;
}

/**
 * Runs the `ratewarden` command with `args` (without the node and script paths).
 *
 * @returns the exit code ({@link EXIT_CODES}): 0 when requests were replayed (or help or the
 *   version was printed), 1 when the input had no request, 2 for an error of any kind.
 *   Never throws: every error is printed as one line on stderr. Every message is printed
 *   through `escapeText` (the text report escapes its own fields, `--json` goes through
 *   `toJsonLine`): text from the input or the command line never reaches the terminal raw.
 */
async function main(args: readonly string[], io: CommandIo = processIo()): Promise<number> {
  try {
    return await run(args, io);
  } catch (error) {
    if (error instanceof UsageError || error instanceof ReplayInputError) {
      io.stderr.write(`ratewarden: ${escapeText(error.message)}\n`);
      return EXIT_CODES.error;
    }
    const message = error instanceof Error ? error.message : String(error);
    io.stderr.write(`ratewarden: unexpected error: ${escapeText(firstLine(message))}\n`);
    return EXIT_CODES.error;
  }
}

async function run(args: readonly string[], io: CommandIo): Promise<number> {
  const { values, positionals } = parseCommandArgs(args);
  if (values.version === true) {
    io.stdout.write(`${readVersion()}\n`);
    return EXIT_CODES.replayed;
  }
  const [command, ...operands] = positionals;
  if (command === undefined) {
    if (values.help === true) {
      io.stdout.write(TOP_HELP);
      return EXIT_CODES.replayed;
    }
    throw new UsageError('missing command: expected `replay` (see `ratewarden --help`)');
  }
  if (command !== 'replay') {
    throw new UsageError(`unknown command \`${command}\`: expected \`replay\` (see \`ratewarden --help\`)`);
  }
  if (values.help === true) {
    io.stdout.write(REPLAY_HELP);
    return EXIT_CODES.replayed;
  }
  if (operands.length > 1) {
    throw new UsageError(
      `expected at most one FILE, got ${operands.length}: ${operands.map((o) => `\`${o}\``).join(', ')}`,
    );
  }

  const top = integerOption('--top', values.top, 0, REPLAY_DEFAULTS.top);
  const strategy = strategyOption(values.strategy);
  const { threshold, windowSeconds } = quotaOption(values.threshold, values.window, strategy);
  const json = values.json === true;

  const operand = operands[0];
  let label: InputLabel;
  let input: string | AsyncIterable<Uint8Array | string>;
  /**
   * No FILE, and stdin is read because it is a pipe: an empty one then means no input was given
   * (a harness's empty pipe). An empty file redirected to stdin was given: it is replayed as it is.
   */
  let pipedByDefault = false;
  if (operand === undefined) {
    // No FILE: piped or redirected input is the log (never ignored); a terminal, /dev/null (CI) or
    // a closed stdin means the built-in sample, without waiting on stdin.
    const kind = io.stdinKind();
    if (kind === 'pipe' || kind === 'file') {
      pipedByDefault = kind === 'pipe';
      input = io.stdin;
      label = { file: '-', sample: false };
      io.stderr.write(`ratewarden: no FILE given: replaying stdin (${kind === 'pipe' ? 'a pipe' : 'a file'})\n`);
    } else {
      input = fileURLToPath(SAMPLE_URL);
      label = { file: input, sample: true };
      if (kind === 'socket') {
        io.stderr.write(
          'ratewarden: no FILE given and stdin is a socket, which is not read: replaying the built-in sample ' +
            '(give `-` to replay stdin)\n',
        );
      }
    }
  } else if (operand === '-') {
    input = io.stdin;
    label = { file: '-', sample: false };
  } else {
    input = operand;
    label = { file: operand, sample: false };
  }

  const run = (from: string | AsyncIterable<Uint8Array | string>): Promise<ReplaySummary> =>
    replay({
      input: from,
      threshold,
      windowSeconds,
      strategy,
      top,
      progress: !json && io.stderr.isTTY === true ? createProgress(io.stderr) : undefined,
    });
  let summary = await run(input);
  if (pipedByDefault && summary.lines === 0) {
    // No FILE and a pipe that closed with no line: no input was given after all (a harness
    // that runs every command with an empty pipe for stdin). Said, never silent.
    io.stderr.write('ratewarden: stdin is empty (or blank): replaying the built-in sample instead (give `-` to replay stdin as it is)\n');
    input = fileURLToPath(SAMPLE_URL);
    label = { file: input, sample: true };
    summary = await run(input);
  }

  for (const example of summary.malformedExamples) {
    io.stderr.write(
      `ratewarden: line ${example.line}: malformed (${example.reason}): ${escapeText(example.text)}\n`,
    );
  }
  const unreported = summary.malformed - summary.malformedExamples.length;
  if (unreported > 0) {
    io.stderr.write(
      `ratewarden: ${unreported} more malformed line${unreported === 1 ? '' : 's'} not shown ` +
        `(${summary.malformed} in all)\n`,
    );
  }
  io.stdout.write(
    json ? `${toJsonLine(summaryToJson(summary, label))}\n` : formatSummary(summary, label),
  );
  if (summary.lines === 0) {
    io.stderr.write(
      'ratewarden: the input is empty (or blank): nothing to replay\n',
    );
    return EXIT_CODES.nothingReplayed;
  }
  if (summary.requests === 0) {
    io.stderr.write(
      'ratewarden: nothing to replay: no line of the input is in the Common or Combined Log Format ' +
        '(`host ident authuser [dd/Mon/yyyy:HH:MM:SS +zzzz] "request" status bytes`)\n',
    );
    return EXIT_CODES.nothingReplayed;
  }
  return EXIT_CODES.replayed;
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

function processIo(): CommandIo {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    // Read lazily: touching `process.stdin` opens it, which a replay of the sample must not do.
    get stdin() {
      return process.stdin;
    },
    stdinKind: () => stdinKind(0),
  };
}

// A closed stdout (`| head`) ends the command quietly; any other write error (a full disk) is
// one line on stderr and exit code 2, not a stack trace.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(EXIT_CODES.replayed);
  process.stderr.write(`ratewarden: cannot write the report to stdout: ${escapeText(systemErrorReason(error))}\n`);
  process.exit(EXIT_CODES.error);
});
void main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
