/**
 * What the HTML report of `--report FILE.html` shows ({@link ReportData}), as the replay and
 * `suggest` compute it: plain data, so that the page (`html-report.ts`) draws it without
 * knowing how it was computed.
 *
 * @module
 */

/** Allowed and refused requests of one policy, per time bucket. */
export interface TimelinePolicy {
  /** The policy as the text report names it, such as `"60/60s sliding-window-log"` or `"all (group)"`. */
  readonly name: string;
  /** Allowed requests in each bucket, bucket `i` starting at `startMs + i × bucketSeconds × 1000`. */
  readonly allowed: ArrayLike<number>;
  /** Refused requests in each bucket; as long as {@link allowed}. */
  readonly refused: ArrayLike<number>;
}

/** Allowed and refused requests over time, for each policy. */
export interface Timeline {
  /** The width of a bucket, in **seconds** (60 for a log of a day; longer for longer logs). */
  readonly bucketSeconds: number;
  /** The start of the first bucket, in **milliseconds** since the epoch (UTC). */
  readonly startMs: number;
  /** One entry per policy, in the order of the text report. */
  readonly policies: readonly TimelinePolicy[];
}

/** One point of a refused-share curve: what a threshold would have done on this log. */
export interface CurvePoint {
  /** Requests allowed per window and client. */
  readonly threshold: number;
  /** Refused requests over all requests, from 0 to 1. */
  readonly refusedShare: number;
  /** Clients with at least one refused request over all clients, from 0 to 1. */
  readonly clientsLimitedShare: number;
}

/** The refused share against the threshold, for one window and strategy. */
export interface Curve {
  /** Such as `"per 60 s, sliding-window-log"`. */
  readonly label: string;
  /** The window, in **seconds**. */
  readonly windowSeconds: number;
  /** The strategy's name, one of `STRATEGY_NAMES`. */
  readonly strategy: string;
  /** The points, by increasing threshold (at least one). */
  readonly points: readonly CurvePoint[];
  /**
   * The goals the answer meets, when `suggest` was asked (one or two: at most one of each kind):
   * which share, and its largest value (0 to 1).
   */
  readonly goals?: readonly { readonly kind: 'clients-limited' | 'refused'; readonly share: number }[] | undefined;
  /** `suggest`'s answer: the smallest threshold meeting every one of {@link goals}. */
  readonly answer?: number | undefined;
  /** The thresholds of the replayed policies on this curve (`replay --report`), to mark on it. */
  readonly marked?: readonly number[] | undefined;
}

/** A client with refused requests. */
export interface LimitedClientRow {
  /** The key (client address, user, field value) as read; the page escapes it. */
  readonly client: string;
  /** Its refused requests. */
  readonly refused: number;
  /** All its requests. */
  readonly requests: number;
}

/** The most-limited clients of one policy. */
export interface TopLimited {
  /** The policy, as {@link TimelinePolicy.name}. */
  readonly policy: string;
  /** Most refused first; may be empty (nobody was limited). */
  readonly clients: readonly LimitedClientRow[];
}

/** Everything the HTML report shows. */
export interface ReportData {
  /** The command that made it. */
  readonly command: 'replay' | 'suggest';
  /** The input, as the text report names it (a path, `<stdin>`, the built-in sample). */
  readonly input: string;
  /** The text report, as printed on stdout (no terminal escapes; the page escapes it as HTML). */
  readonly text: string;
  /** Allowed and refused over time, when policies were replayed. */
  readonly timeline?: Timeline | undefined;
  /** Refused-share curves, one per window and strategy (may be empty). */
  readonly curves: readonly Curve[];
  /** The most-limited clients, per policy (may be empty). */
  readonly topLimited: readonly TopLimited[];
}
