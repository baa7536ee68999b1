/**
 * The help texts of the `ratewarden` command: {@link TOP_HELP} (`ratewarden --help`) and
 * {@link REPLAY_HELP} (`ratewarden replay --help`), with a line on each strategy.
 *
 * @module
 */

import { MAX_THRESHOLD_TIMES_WINDOW_MS, MAX_WINDOW_SECONDS, MIN_SECONDS } from '../quota.js';
import { EXIT_CODES } from './options.js';
import { REPLAY_DEFAULTS } from './replay.js';
import { STRATEGY_NAMES, createStrategy, type StrategyName } from './strategies.js';

/** The sliding-window log's largest threshold, as its strategy says. */
const MAX_LOG_THRESHOLD = createStrategy('sliding-window-log').maxThreshold;
/** The strategies whose `threshold × windowMs` is bounded (by 2^42), as they say. */
const RATE_BOUNDED = STRATEGY_NAMES.filter((name) => createStrategy(name).maxThresholdTimesWindowMs !== undefined);

/** `a, b and c`. */
function listed(names: readonly string[]): string {
  return names.length < 2 ? names.join('') : `${names.slice(0, -1).join(', ')} and ${names.at(-1) ?? ''}`;
}

/** A few words on each strategy, for `--help`. */
const STRATEGY_HELP: Readonly<Record<StrategyName, string>> = {
  'sliding-window-log': `exact: at most N in any window; N up to ${MAX_LOG_THRESHOLD}`,
  'sliding-window-counter': 'this window + the last one, weighted; an estimate',
  'fixed-window': 'a counter reset every window; 2N at a boundary',
  'token-bucket': 'N tokens, refilled at N per window; bursts of N',
  gcra: 'one timestamp per client; decides as token-bucket',
};

/** `ratewarden --help`. */
export const TOP_HELP = `Usage: ratewarden <command> [options]

Commands:
  replay [FILE]    replay an access log through a rate limit and report what it
                   would have done

Options:
  -h, --help       show help (also: ratewarden replay --help)
  --version        show the version

Run \`ratewarden replay --help\` for the options of replay.
`;

/** `ratewarden replay --help`. */
export const REPLAY_HELP = `Usage: ratewarden replay [FILE] [--threshold N] [--window SECONDS]
                         [--strategy NAME] [--json] [--top N]

Replays an access log (NCSA Common or Combined Log Format) through a per-client
rate limit (by default the exact sliding-window log), in timestamp order, and
reports how many requests would have been allowed and rejected. The client is
the first field of each line.

Arguments:
  FILE                path of the log; \`-\` reads stdin. With no FILE, stdin is
                      read when it is a pipe or a file (\`zcat access.log.gz |
                      ratewarden replay\`, \`ratewarden replay < access.log\`);
                      from a terminal or /dev/null, or when the pipe is
                      empty, the built-in sample (10,000 requests) is
                      replayed. Gzip data (a .gz file, or gzip on
                      stdin) is recognised by its first bytes and gunzipped.

Options:
  --threshold N       requests allowed per window and client, a positive integer
                      (default ${REPLAY_DEFAULTS.threshold}): at most ${MAX_LOG_THRESHOLD} with sliding-window-log,
                      and N x (window in ms) at most 2^42 (${MAX_THRESHOLD_TIMES_WINDOW_MS}) with
                      ${listed(RATE_BOUNDED)}
  --window SECONDS    the window length in seconds, from ${MIN_SECONDS} to ${MAX_WINDOW_SECONDS},
                      a whole number of milliseconds: 1.5 is allowed, 0.0015 is
                      not (default ${REPLAY_DEFAULTS.windowSeconds})
  --strategy NAME     the algorithm (default ${REPLAY_DEFAULTS.strategy}):
${STRATEGY_NAMES.map((name) => `    ${name.padEnd(24)}${STRATEGY_HELP[name]}`).join('\n')}
  --top N             how many of the most-limited clients to list, an integer
                      >= 0 (default ${REPLAY_DEFAULTS.top})
  --json              print one JSON object instead of the report
  -h, --help          show this help

Malformed lines are counted and the first ${REPLAY_DEFAULTS.maxMalformedExamples} are reported on stderr; empty
lines before the last non-empty one count as malformed, empty lines at the end
are ignored.

Exit status:
  ${EXIT_CODES.replayed}  the report is printed; requests were replayed
  ${EXIT_CODES.nothingReplayed}  the report is printed, but there was nothing to replay: the input
     is empty, or no line of it is in the log format
  ${EXIT_CODES.error}  no report: a bad option, an input that cannot be read (missing
     file, corrupt gzip data), a report that cannot be written, or an
     unexpected error
`;
