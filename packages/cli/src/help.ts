/**
 * The help texts of the `ratewarden` command: {@link TOP_HELP} (`ratewarden --help`),
 * {@link REPLAY_HELP} (`ratewarden replay --help`), with a line on each strategy, and
 * {@link SUGGEST_HELP} (`ratewarden suggest --help`).
 *
 * @module
 */

import { TokenBucket } from 'ratewarden';

/** The shortest window createQuota takes, in seconds (one millisecond). */
const MIN_SECONDS = 0.001;
/** The longest window createQuota takes, in seconds. */
const MAX_WINDOW_SECONDS = 1e9;
/** threshold × window in ms, at most, for the rate strategies (2^42). */
const MAX_THRESHOLD_TIMES_WINDOW_MS = new TokenBucket().maxThresholdTimesWindowMs;
import { EXIT_CODES } from './options.js';
import { REPLAY_DEFAULTS } from './replay.js';
import { FORMATS } from './formats/registry.js';
import { DEFAULT_IPV6_SUBNET } from './key-option.js';
import { STRATEGIES, STRATEGY_NAMES } from './strategies.js';

/** `at most 1048576 with sliding-window-log`: each strategy with a largest threshold, as it says. */
const CAPPED = STRATEGIES.flatMap((s) => {
  const max = s.create().maxThreshold;
  return max === undefined ? [] : [`at most ${max} with ${s.name}`];
}).join(', ');
/** The strategies whose `threshold × windowMs` is bounded (by 2^42), as they say. */
const RATE_BOUNDED = STRATEGIES.filter((s) => s.create().maxThresholdTimesWindowMs !== undefined).map((s) => s.name);

/**
 * `text` wrapped to lines of at most 80 columns, each after `indent` spaces, the first line's
 * indent left out (it follows the option's name).
 */
function wrap(text: string, indent: number): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && indent + line.length + 1 + word.length > 80) {
      lines.push(line);
      line = word;
    } else {
      line = line === '' ? word : `${line} ${word}`;
    }
  }
  lines.push(line);
  return lines.join(`\n${' '.repeat(indent)}`);
}

/** `a, b and c`. */
function listed(names: readonly string[]): string {
  return names.length < 2 ? names.join('') : `${names.slice(0, -1).join(', ')} and ${names.at(-1) ?? ''}`;
}

/** `ratewarden --help`. */
export const TOP_HELP = `Usage: ratewarden <command> [options]

Commands:
  replay [FILE]    replay an access log through rate limits and report what
                   they would have done
  suggest [FILE]   find the smallest threshold that meets a goal on a log

Options:
  -h, --help       show help (also: ratewarden replay --help)
  --version        show the version

Run \`ratewarden replay --help\` or \`ratewarden suggest --help\` for their options.
`;

/** The input options, shared by replay and suggest. */
const INPUT_HELP = `Input:
  FILE                path of the log; \`-\` reads stdin. With no FILE, stdin is
                      read when it is a pipe or a file (\`zcat access.log.gz |
                      ratewarden replay\`, \`ratewarden replay < access.log\`);
                      from a terminal or /dev/null, or when the pipe is
                      empty, the built-in sample (10,000 requests) is
                      read. Gzip data (a .gz file, or gzip on
                      stdin) is recognised by its first bytes and gunzipped.
  --format NAME       ${wrap(`auto (default: from the first line in one of them), ${FORMATS.map((f) => `${f.name} ${f.help}`).join(', ')}`, 22)}
  --key KEY           what a request is keyed by: ip/N, the client address
                      through the middlewares' ipKey, IPv6 grouped by /N (N
                      from 1 to 128; default ip/${DEFAULT_IPV6_SUBNET}, as the middlewares), ip
                      (the client address as written), user (the authenticated
                      user, CLF's %u), or field:PATH (a JSON field, such as
                      field:request.client_ip)
  --time-field PATH   JSON lines: the time field (default: detected)
  --time-format F     JSON lines: auto (default), iso8601, epoch-s, epoch-ms
`;

/** `ratewarden replay --help`. */
export const REPLAY_HELP = `Usage: ratewarden replay [FILE] [--limit N/DURATION[:STRATEGY]]...
                         [--threshold N] [--window SECONDS] [--strategy NAME]
                         [--format NAME] [--key KEY] [--json] [--top N]
                         [--report FILE.html]

Replays an access log through per-client rate limits (by default the exact
sliding-window log), in timestamp order, and reports how many requests would
have been allowed and refused. Several --limit policies are replayed in one
read of the log, side by side, and together as one all-or-nothing group (a
RateLimitGroup, as they would run in production).

${INPUT_HELP}
Options:
  --limit N/DURATION[:STRATEGY]
                      a policy: N requests per DURATION per client (60/60s,
                      1000/1h, 10/s; units ms, s, m, h, d), with its own
                      strategy if given (10/1s:gcra); repeat for several
  --threshold N       requests allowed per window and client, a positive integer
                      (default ${REPLAY_DEFAULTS.threshold}): ${CAPPED},
                      and N x (window in ms) at most 2^42 (${MAX_THRESHOLD_TIMES_WINDOW_MS}) with
                      ${listed(RATE_BOUNDED)}
  --window SECONDS    the window length in seconds, from ${MIN_SECONDS} to ${MAX_WINDOW_SECONDS},
                      a whole number of milliseconds: 1.5 is allowed, 0.0015 is
                      not (default ${REPLAY_DEFAULTS.windowSeconds}); or a duration as --limit
                      takes it (90s, 1m, 1h)
  --strategy NAME     the algorithm (default ${REPLAY_DEFAULTS.strategy}):
${STRATEGIES.map((s) => `    ${s.name.padEnd(24)}${s.help}`).join('\n')}
  --top N             how many of the most-limited clients to list, an integer
                      >= 0 (default ${REPLAY_DEFAULTS.top})
  --json              print one JSON object instead of the report
  --report FILE.html  also write a self-contained HTML report with charts
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

/** `ratewarden suggest --help`. */
export const SUGGEST_HELP = `Usage: ratewarden suggest [FILE] [--window DURATION]... [--strategy NAME]...
                          [--max-clients-limited P%] [--max-refused P%]
                          [--format NAME] [--key KEY] [--json]
                          [--report FILE.html]

Finds, for each window and strategy, the smallest threshold that meets the
goal on this log, in a few passes over it (not by replaying every threshold),
and shows the curve of refused share against threshold it was read from, with
the log's span and busiest hour: the answer holds for traffic like this log's.

${INPUT_HELP}
Options:
  --window DURATION   a window (60s, 1m, 1h; default 60s); repeat for several
  --strategy NAME     ${wrap(`a strategy (default ${REPLAY_DEFAULTS.strategy}), repeat for several: ${STRATEGY_NAMES.join(', ')}`, 22)}
  --max-clients-limited P%
                      the goal: at most P% of clients with a refused request
                      (default 1% when no goal is given)
  --max-refused P%    the goal: at most P% of requests refused (with
                      --max-clients-limited, both must hold)
  --top N             with --report, how many of the most-limited clients to
                      chart (default ${REPLAY_DEFAULTS.top})
  --json              print one JSON object instead of the report
  --report FILE.html  also write a self-contained HTML report with charts
  -h, --help          show this help

Exit status: as for replay (0 answered, 1 nothing to read, 2 error).
`;
