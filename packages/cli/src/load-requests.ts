/**
 * Reading a log into requests, for `replay` and `suggest` alike: {@link loadRequests} reads the
 * log once (`input.ts`, in any of the formats of `formats/`, picked by `--format` or detected),
 * keys its requests (optionally grouping IPv6 addresses by prefix with `ipKey`, once per distinct
 * key) and orders them by time (`order.ts`).
 *
 * Memory is about 16 bytes per request (a `Float64Array` of times, a `Uint32Array` of client
 * numbers, the `Uint32Array` sort order), plus one string per distinct client; no line is kept.
 *
 * @module
 */

import { ipKey } from 'ratewarden';
import { ClfFormat } from './formats/clf.js';
import type { LineFormat } from './formats/format.js';
import { readInput, type ReplayInput } from './input.js';
import { sortByTime } from './order.js';
import { silentProgress, type ProgressReporter } from './progress.js';
import { RequestCollector, type FormatChooser, type MalformedLine } from './request-collector.js';
import type { ReplayRequests } from './simulate.js';

/** How many malformed lines are kept as examples by default. */
export const MAX_MALFORMED_EXAMPLES = 5;

/** How the requests are read and keyed: the options {@link loadRequests} takes. */
export interface LoadOptions {
  /** A path, or a stream of the log's bytes. */
  readonly input: ReplayInput;
  /**
   * Whether the input is gzip-compressed. Default: detected from its first two bytes (the gzip
   * magic number `1f 8b`), for files and streams alike, whatever the file's name.
   */
  readonly gzip?: boolean | undefined;
  /**
   * The parser of the lines: a format, or a function that picks one from the first line it
   * recognises (`--format auto`). Default: the Common/Combined Log Format keyed by client address.
   */
  readonly format?: LineFormat | FormatChooser | undefined;
  /**
   * Group keys that are IPv6 addresses by their first `ipv6Subnet` bits, with `ipKey` (which
   * also writes every spelling of an address, and IPv4-mapped IPv6, as one key): `--key ip/64`.
   * An integer from 1 to 128. Default: keys as read (distinct bytes, distinct keys).
   */
  readonly ipv6Subnet?: number | undefined;
  /** How many malformed lines to keep as examples. Default 5. */
  readonly maxMalformedExamples?: number | undefined;
  /** Receives progress; default: nothing shown. */
  readonly progress?: ProgressReporter | undefined;
}

/** The requests of a log, read, keyed and ordered by {@link loadRequests}. */
export interface LoadedRequests extends ReplayRequests {
  /** The order of the requests by time, ties in file order (indexes into `times`/`clientOf`). */
  readonly order: Uint32Array;
  /** Lines read: requests plus malformed lines (empty lines at the end are not counted). */
  readonly lines: number;
  /** Malformed lines, empty lines before the last request included. */
  readonly malformed: number;
  /** The first malformed lines, in file order. */
  readonly malformedExamples: readonly MalformedLine[];
  /** The format the lines were read in (`"clf"` when nothing was read). */
  readonly format: string;
  /** What the key is, as the format says (`"client address"`), with the IPv6 grouping if any. */
  readonly keyLabel: string;
  /** What the time is, as the format says (`"[timestamp]"`, `"JSON field ts (auto)"`). */
  readonly timeLabel: string;
  /** The earliest request time, in **milliseconds** since the epoch; `NaN` when there is none. */
  readonly firstMs: number;
  /** The latest request time, in **milliseconds** since the epoch; `NaN` when there is none. */
  readonly lastMs: number;
}

/**
 * Reads the log once, keys its requests and orders them by time.
 *
 * @throws {ReplayInputError} when the input cannot be read (missing file, permission denied,
 *   a directory, corrupt gzip data).
 */
export async function loadRequests(options: LoadOptions): Promise<LoadedRequests> {
  const progress = options.progress ?? silentProgress;
  const collector = new RequestCollector(
    options.maxMalformedExamples ?? MAX_MALFORMED_EXAMPLES,
    options.format ?? new ClfFormat(),
  );
  await readInput(options.input, options.gzip, collector, progress);
  const count = collector.count;
  let clientOf: Uint32Array = collector.clientOf;
  let clientNames: readonly string[] = collector.clientNames;
  let keyLabel = collector.format.keyLabel;
  const ipv6Subnet = options.ipv6Subnet;
  if (ipv6Subnet !== undefined) {
    ({ clientOf, clientNames } = groupKeys(clientOf, count, clientNames, (name) => ipKey(name, { ipv6Subnet })));
    keyLabel = `${keyLabel}, IPv6 grouped by /${ipv6Subnet}`;
  }
  const times = collector.times;
  let firstMs = Number.NaN;
  let lastMs = Number.NaN;
  for (let i = 0; i < count; i++) {
    const t = times[i] as number;
    if (!(t >= firstMs)) firstMs = t;
    if (!(t <= lastMs)) lastMs = t;
  }
  return {
    times,
    clientOf,
    count,
    clientNames,
    order: sortByTime(times, count),
    lines: count + collector.malformed,
    malformed: collector.malformed,
    malformedExamples: collector.examples,
    format: collector.format.name,
    keyLabel,
    timeLabel: collector.format.timeLabel,
    firstMs,
    lastMs,
  };
}

/**
 * The client numbers remapped so that names with the same `keyOf` share one number:
 * `keyOf` is called once per distinct name.
 */
function groupKeys(
  clientOf: Uint32Array,
  count: number,
  names: readonly string[],
  keyOf: (name: string) => string,
): { clientOf: Uint32Array; clientNames: string[] } {
  const ids = new Map<string, number>();
  const grouped: string[] = [];
  const to = new Uint32Array(names.length);
  for (const [c, name] of names.entries()) {
    const key = keyOf(name);
    let id = ids.get(key);
    if (id === undefined) {
      id = grouped.length;
      ids.set(key, id);
      grouped.push(key);
    }
    to[c] = id;
  }
  const out = new Uint32Array(count);
  for (let i = 0; i < count; i++) out[i] = to[clientOf[i] as number] as number;
  return { clientOf: out, clientNames: grouped };
}
