/**
 * The help texts of the `ratewarden` command: {@link TOP_HELP} (`ratewarden --help`) and
 * {@link REPLAY_HELP} (`ratewarden replay --help`), with a line on each strategy.
 *
 * @module
 */

import { REPLAY_DEFAULTS } from './replay.js';
import { STRATEGY_NAMES, type StrategyName } from './strategies.js';

/** A few words on each strategy, for `--help`. */
const STRATEGY_HELP: Readonly<Record<StrategyName, string>> = {
  'sliding-window-log': 'exact: at most N in any window; N up to 1048576',
  'sliding-window-counter': 'this window + the last one, weighted; an estimate',
  'fixed-window': 'a counter reset every window; 2N at a boundary',
  'token-bucket': 'N tokens, refilled at N per window; bursts of N',
  gcra: 'one timestamp per client; decides as token-bucket',
};

/** `ratewarden --help`. */
export const TOP_HELP = `Usage: ratewarden <command> [options]

Commands:
  replay [FILE]    replay an access log through a rate limit and report what it would have done

Options:
  -h, --help       show help (also: ratewarden replay --help)
  --version        show the version

Run \`ratewarden replay --help\` for the options of replay.
`;

/** `ratewarden replay --help`. */
export const REPLAY_HELP = `Usage: ratewarden replay [FILE] [--threshold N] [--window SECONDS] [--strategy NAME] [--json] [--top N]

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
  --window SECONDS    the window length in seconds, from 0.001 to 1e9; fractions
                      down to the millisecond (default ${REPLAY_DEFAULTS.windowSeconds})
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
