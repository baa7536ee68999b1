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
import { constants } from 'node:fs';
import { access, stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { escapeText, toJsonLine } from './escape.js';
import { REPLAY_HELP, SUGGEST_HELP, TOP_HELP } from './help.js';
import { formatEntry } from './formats/registry.js';
import { renderHtmlReport } from './html-report.js';
import { loadOptions } from './input-options.js';
import { ReplayInputError, stdinKind, systemErrorReason, type ReplayInput } from './input.js';
import {
  EXIT_CODES,
  UsageError,
  firstLine,
  integerOption,
  limitOptions,
  parseCommandArgs,
  percentOption,
  quotaOption,
  single,
  strategyOption,
  windowsOption,
  type ParsedArgs,
} from './options.js';
import type { Policy } from './policies.js';
import { createProgress, type ProgressReporter } from './progress.js';
import { REPLAY_DEFAULTS, replay } from './replay.js';
import type { ReportData } from './report-data.js';
import {
  formatSuggestion,
  formatSummary,
  replayReportData,
  suggestReportData,
  suggestionToJson,
  summaryToJson,
  type InputLabel,
} from './report.js';
import type { MalformedLine } from './request-collector.js';
import type { SuggestGoal } from './suggest.js';
import { SUGGEST_DEFAULTS, suggest } from './suggestion.js';

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
    throw new UsageError('missing command: expected `replay` or `suggest` (see `ratewarden --help`)');
  }
  if (command !== 'replay' && command !== 'suggest') {
    throw new UsageError(`unknown command \`${command}\`: expected \`replay\` or \`suggest\` (see \`ratewarden --help\`)`);
  }
  if (values.help === true) {
    io.stdout.write(command === 'replay' ? REPLAY_HELP : SUGGEST_HELP);
    return EXIT_CODES.replayed;
  }
  if (operands.length > 1) {
    throw new UsageError(
      `expected at most one FILE, got ${operands.length}: ${operands.map((o) => `\`${o}\``).join(', ')}`,
    );
  }
  return command === 'replay' ? runReplay(values, operands[0], io) : runSuggest(values, operands[0], io);
}

/** The input of a command: what to read, how the report names it, and whether it is a default pipe. */
interface PickedInput {
  readonly input: ReplayInput;
  readonly label: InputLabel;
  /**
   * No FILE, and stdin is read because it is a pipe: an empty one then means no input was given
   * (a harness's empty pipe). An empty file redirected to stdin was given: it is replayed as it is.
   */
  readonly pipedByDefault: boolean;
}

const SAMPLE: PickedInput = {
  input: fileURLToPath(SAMPLE_URL),
  label: { file: fileURLToPath(SAMPLE_URL), sample: true },
  pipedByDefault: false,
};

/** The input of a command line: the FILE, `-`, piped stdin or the built-in sample. */
function pickInput(operand: string | undefined, io: CommandIo): PickedInput {
  if (operand === '-') return { input: io.stdin, label: { file: '-', sample: false }, pipedByDefault: false };
  if (operand !== undefined) return { input: operand, label: { file: operand, sample: false }, pipedByDefault: false };
  // No FILE: piped or redirected input is the log (never ignored); a terminal, /dev/null (CI) or
  // a closed stdin means the built-in sample, without waiting on stdin.
  const kind = io.stdinKind();
  if (kind === 'pipe' || kind === 'file') {
    io.stderr.write(`ratewarden: no FILE given: replaying stdin (${kind === 'pipe' ? 'a pipe' : 'a file'})\n`);
    return { input: io.stdin, label: { file: '-', sample: false }, pipedByDefault: kind === 'pipe' };
  }
  if (kind === 'socket') {
    io.stderr.write(
      'ratewarden: no FILE given and stdin is a socket, which is not read: replaying the built-in sample ' +
        '(give `-` to replay stdin)\n',
    );
  }
  return SAMPLE;
}

/**
 * Runs `compute` on the input and, with no FILE and a pipe that closed with no line (a harness
 * that runs every command with an empty pipe for stdin), on the built-in sample instead, as
 * stderr says. Then reports the malformed lines on stderr.
 */
/** What every command reads: lines, requests and malformed lines. */
interface ReadResult {
  readonly lines: number;
  readonly requests: number;
  readonly malformed: number;
  readonly malformedExamples: readonly MalformedLine[];
}

async function withInput<T extends ReadResult>(
  picked: PickedInput,
  io: CommandIo,
  compute: (input: ReplayInput) => Promise<T>,
): Promise<{ result: T; label: InputLabel }> {
  let result = await compute(picked.input);
  let label = picked.label;
  if (picked.pipedByDefault && result.lines === 0) {
    io.stderr.write('ratewarden: stdin is empty (or blank): replaying the built-in sample instead (give `-` to replay stdin as it is)\n');
    result = await compute(SAMPLE.input);
    label = SAMPLE.label;
  }
  for (const example of result.malformedExamples) {
    // The reason may hold an option's value (`no field PATH` of `--time-field PATH`): escaped too.
    io.stderr.write(`ratewarden: line ${example.line}: malformed (${escapeText(example.reason)}): ${escapeText(example.text)}\n`);
  }
  const unreported = result.malformed - result.malformedExamples.length;
  if (unreported > 0) {
    io.stderr.write(`ratewarden: ${unreported} more malformed line${unreported === 1 ? '' : 's'} not shown (${result.malformed} in all)\n`);
  }
  return { result, label };
}

/** The exit code of a command that read `result`, saying on stderr why nothing was replayed. */
function exitCode(result: { readonly lines: number; readonly requests: number }, format: string, io: CommandIo): number {
  if (result.lines === 0) {
    io.stderr.write('ratewarden: the input is empty (or blank): nothing to replay\n');
    return EXIT_CODES.nothingReplayed;
  }
  if (result.requests === 0) {
    io.stderr.write(`ratewarden: nothing to replay: no line of the input is in the ${formatEntry(format)?.description ?? escapeText(format)}\n`);
    return EXIT_CODES.nothingReplayed;
  }
  return EXIT_CODES.replayed;
}

async function runReplay(values: ParsedArgs['values'], operand: string | undefined, io: CommandIo): Promise<number> {
  const top = integerOption('--top', values.top, 0, REPLAY_DEFAULTS.top);
  const strategy = strategyOption(single('--strategy', values.strategy, 'replay takes one default strategy (give each `--limit` its own: `--limit 60/1m:gcra`)'));
  const window = single('--window', values.window, 'replay takes one window (give several policies with `--limit`)');
  let policies: Policy[];
  if (values.limit !== undefined && values.limit.length > 0) {
    if (values.threshold !== undefined || window !== undefined) {
      throw new UsageError('`--limit` and `--threshold`/`--window` both give the limit: use one or the other');
    }
    policies = limitOptions(values.limit, strategy);
  } else {
    policies = [quotaOption(values.threshold, window, strategy)];
  }
  if (values['max-clients-limited'] !== undefined || values['max-refused'] !== undefined) {
    throw new UsageError('`--max-clients-limited` and `--max-refused` are goals of `ratewarden suggest`, not `replay`');
  }
  const load = loadOptions(values);
  return runCommand(values, operand, io, {
    compute: (input, report, progress) =>
      replay({ input, ...load, policies, strategy, top, timeline: report, curves: report, progress }),
    text: formatSummary,
    json: summaryToJson,
    reportData: replayReportData,
  });
}

async function runSuggest(values: ParsedArgs['values'], operand: string | undefined, io: CommandIo): Promise<number> {
  if (values.limit !== undefined || values.threshold !== undefined) {
    throw new UsageError('`suggest` finds the threshold: give it `--window` (and `--strategy`), not `--limit` or `--threshold`');
  }
  const strategies = (values.strategy ?? [REPLAY_DEFAULTS.strategy]).map((name) => strategyOption(name));
  const windows = windowsOption(values.window, REPLAY_DEFAULTS.windowSeconds, strategies);
  const goals: SuggestGoal[] = [];
  const clientsShare = percentOption('--max-clients-limited', values['max-clients-limited']);
  const refusedShare = percentOption('--max-refused', values['max-refused']);
  if (clientsShare !== undefined) goals.push({ kind: 'clients-limited', share: clientsShare });
  if (refusedShare !== undefined) goals.push({ kind: 'refused', share: refusedShare });
  if (goals.length === 0) goals.push(SUGGEST_DEFAULTS.goal);
  const top = integerOption('--top', values.top, 0, REPLAY_DEFAULTS.top);
  const load = loadOptions(values);
  return runCommand(values, operand, io, {
    compute: (input, report, progress) =>
      suggest({
        input,
        ...load,
        windows: [...new Set(windows)],
        strategies: [...new Set(strategies)],
        goals,
        top,
        replayAnswers: report,
        progress,
      }),
    text: formatSuggestion,
    json: suggestionToJson,
    reportData: suggestReportData,
  });
}

/** What a command computes from its input, and how it reports it: {@link runCommand}'s parts. */
interface CommandParts<T> {
  /** Reads `input` and computes the outcome, with what the HTML report needs when `report` is set. */
  compute(input: ReplayInput, report: boolean, progress: ProgressReporter | undefined): Promise<T>;
  /** The text report. */
  text(result: T, label: InputLabel): string;
  /** The `--json` object. */
  json(result: T, label: InputLabel): Record<string, unknown>;
  /** The HTML report's data, given the text report. */
  reportData(result: T, label: InputLabel, text: string): ReportData;
}

/**
 * The common course of `replay` and `suggest`: checks `--report`'s path, picks the input,
 * computes, writes the HTML report if asked, prints the text or JSON report, and returns the
 * exit code.
 */
async function runCommand<T extends ReadResult & { readonly format: string }>(
  values: ParsedArgs['values'],
  operand: string | undefined,
  io: CommandIo,
  parts: CommandParts<T>,
): Promise<number> {
  const json = values.json === true;
  const reportFile = values.report;
  if (reportFile !== undefined) await checkReportPath(reportFile);
  const progress = !json && io.stderr.isTTY === true ? createProgress(io.stderr) : undefined;
  const { result, label } = await withInput(pickInput(operand, io), io, (input) => parts.compute(input, reportFile !== undefined, progress));
  const text = parts.text(result, label);
  if (reportFile !== undefined) await writeReport(reportFile, parts.reportData(result, label, text), io);
  io.stdout.write(json ? `${toJsonLine(parts.json(result, label))}\n` : text);
  return exitCode(result, result.format, io);
}

/**
 * Checks, before anything is read, that the HTML report can be written to `file`: its folder
 * exists and is writable, and `file` is not a folder. Nothing is created or truncated (a run that
 * fails later leaves an older report as it was).
 *
 * @throws {ReplayInputError} saying why not.
 */
async function checkReportPath(file: string): Promise<void> {
  const fail = (reason: string): never => {
    throw new ReplayInputError(`cannot write the report to \`${file}\`: ${reason}`);
  };
  try {
    if ((await stat(file)).isDirectory()) fail('is a directory');
  } catch (error) {
    if (error instanceof ReplayInputError) throw error;
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') fail(error instanceof Error ? systemErrorReason(error) : String(error));
  }
  try {
    await access(dirname(file), constants.W_OK);
  } catch (error) {
    fail(error instanceof Error ? systemErrorReason(error) : String(error));
  }
}

/** Writes the HTML report to `file`, and says where on stderr. */
async function writeReport(file: string, data: ReportData, io: CommandIo): Promise<void> {
  const html = renderHtmlReport(data);
  try {
    await writeFile(file, html);
  } catch (error) {
    throw new ReplayInputError(`cannot write the report to \`${file}\`: ${error instanceof Error ? systemErrorReason(error) : String(error)}`);
  }
  io.stderr.write(`ratewarden: report written to ${escapeText(file)} (open it in a browser)\n`);
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
