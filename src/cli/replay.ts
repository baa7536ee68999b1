/**
 * The replay pipeline: read an access log, parse it, sort its requests by time and decide each
 * one with a {@link RateLimiter}, to answer "what would this limit have done to my traffic?".
 *
 * Memory is about 16 bytes per request (a `Float64Array` of times, a `Uint32Array` of client
 * numbers, the `Uint32Array` sort order), plus one string per distinct client and the limiter's
 * state; no line is kept.
 *
 * @module
 */

import { open } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { rangeError, typeError } from '../errors.js';
import { RateLimiter } from '../rate-limiter.js';
import { FixedWindow } from '../strategies/fixed-window.js';
import { GCRA } from '../strategies/gcra.js';
import { SlidingWindowCounter } from '../strategies/sliding-window-counter.js';
import { SlidingWindowLog } from '../strategies/sliding-window-log.js';
import { TokenBucket } from '../strategies/token-bucket.js';
import type { RateLimitStrategy } from '../strategy.js';
import {
  LogLineParser,
  MALFORMED_REASONS,
  R_EMPTY,
  R_TOO_LONG,
  decodeClient,
} from './log-parser.js';
import { groupDigits, silentProgress, type ProgressReporter } from './progress.js';

/** Lines longer than this many bytes (without the line ending) are malformed: `line too long`. */
export const MAX_LINE_BYTES = 1 << 20;

/** The names of the strategies a replay can use, the default first. */
export const STRATEGY_NAMES = [
  'sliding-window-log',
  'sliding-window-counter',
  'fixed-window',
  'token-bucket',
  'gcra',
] as const;

/** One of {@link STRATEGY_NAMES}. */
export type StrategyName = (typeof STRATEGY_NAMES)[number];

/**
 * The strategy class of each name. The type checks that each class's `name` is its key.
 */
const STRATEGY_CLASSES: {
  readonly [K in StrategyName]: new () => RateLimitStrategy<unknown> & { readonly name: K };
} = {
  'sliding-window-log': SlidingWindowLog,
  'sliding-window-counter': SlidingWindowCounter,
  'fixed-window': FixedWindow,
  'token-bucket': TokenBucket,
  gcra: GCRA,
};

/** Defaults of the replay options. */
export const REPLAY_DEFAULTS = {
  threshold: 60,
  windowSeconds: 60,
  strategy: 'sliding-window-log' satisfies StrategyName,
  top: 10,
  maxMalformedExamples: 5,
} as const;

/** Whether `name` is one of {@link STRATEGY_NAMES} (an own name, not `toString` and the like). */
export function isStrategyName(name: unknown): name is StrategyName {
  return typeof name === 'string' && (STRATEGY_NAMES as readonly string[]).includes(name);
}

/**
 * A new instance of the strategy called `name`.
 *
 * @throws {RateWardenTypeError} (a `TypeError`) naming `strategy` when `name` is not a string.
 * @throws {RateWardenRangeError} (a `RangeError`) naming `strategy` when it is not one of
 *   {@link STRATEGY_NAMES}.
 */
export function createStrategy(name: unknown): RateLimitStrategy<unknown> {
  if (typeof name !== 'string') throw typeError('strategy', `one of ${STRATEGY_NAMES.join(', ')}`, name);
  if (!isStrategyName(name)) throw rangeError('strategy', `one of ${STRATEGY_NAMES.join(', ')}`, name);
  return new STRATEGY_CLASSES[name]();
}

/**
 * The input of a replay: a file path, or the bytes themselves as an async iterable of chunks
 * (a readable stream such as `process.stdin`; string chunks are read as UTF-8).
 */
export type ReplayInput = string | AsyncIterable<Uint8Array | string>;

/** Options of {@link replay}. */
export interface ReplayOptions {
  /** A path, or a stream of the log's bytes. */
  readonly input: ReplayInput;
  /**
   * Whether the input is gzip-compressed. Default: detected from its first two bytes (the gzip
   * magic number `1f 8b`), for files and streams alike, whatever the file's name.
   */
  readonly gzip?: boolean | undefined;
  /** Requests allowed per window and client: a positive safe integer. Default 60. */
  readonly threshold?: number | undefined;
  /** The window in **seconds**: a finite number greater than 0. Default 60. */
  readonly windowSeconds?: number | undefined;
  /**
   * The algorithm, by name: one of {@link STRATEGY_NAMES}. Default `"sliding-window-log"`, the
   * exact sliding-window log.
   */
  readonly strategy?: string | undefined;
  /** How many of the most-rejected clients to list. Default 10. */
  readonly top?: number | undefined;
  /** How many malformed lines to keep as examples. Default 5. */
  readonly maxMalformedExamples?: number | undefined;
  /** Receives progress; default: nothing shown. */
  readonly progress?: ProgressReporter | undefined;
  /**
   * The clock timing the replay, in **milliseconds** (only used for `seconds` and
   * `linesPerSecond`). Default `performance.now()`.
   */
  readonly timer?: (() => number) | undefined;
}

/** A client that had requests rejected. */
export interface LimitedClient {
  /** The client address. */
  readonly client: string;
  /** Its rejected requests. */
  readonly rejected: number;
  /** All its requests. */
  readonly requests: number;
}

/** A malformed line, kept as an example. */
export interface MalformedLine {
  /** The line number, from 1. */
  readonly line: number;
  /** A short reason, one of `MALFORMED_REASONS`. */
  readonly reason: string;
  /** The start of the line: at most 80 characters, control characters escaped as `\xHH`. */
  readonly text: string;
}

/** The outcome of {@link replay}. */
export interface ReplaySummary {
  /** Requests allowed per window and client. */
  readonly threshold: number;
  /** The window, in **seconds**. */
  readonly windowSeconds: number;
  /** The limiter's strategy: one of {@link STRATEGY_NAMES}, such as `"sliding-window-log"`. */
  readonly strategy: string;
  /** Lines read: requests plus malformed lines (empty lines at the end are not counted). */
  readonly lines: number;
  /** Valid lines, each one request. */
  readonly requests: number;
  /** Requests the limiter allowed. */
  readonly allowed: number;
  /** Requests the limiter rejected. */
  readonly rejected: number;
  /** Distinct clients. */
  readonly clients: number;
  /** Clients with at least one rejected request. */
  readonly clientsLimited: number;
  /** Malformed lines, empty lines before the last request included. */
  readonly malformed: number;
  /** The most-rejected clients, most rejected first, ties by client (code-unit order). */
  readonly topLimited: readonly LimitedClient[];
  /** The first malformed lines, in file order. */
  readonly malformedExamples: readonly MalformedLine[];
  /** Time taken by the whole replay (reading included), in **seconds**. */
  readonly seconds: number;
  /** `lines / seconds`; 0 when `seconds` is 0. */
  readonly linesPerSecond: number;
}

/** The input could not be read: a missing or unreadable file, a corrupt gzip stream. */
export class ReplayInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ReplayInputError';
  }
}

const NEWLINE = 0x0a;
const CR = 0x0d;
/** Bytes kept from a line too long to keep whole, for its example text. */
const EXAMPLE_BYTES = 320;
/** Hosts up to this many bytes are compared with the previous line's, to skip the lookup. */
const LAST_CLIENT_BYTES = 64;

/**
 * Collects the requests of the lines it is given: times and client numbers in growable typed
 * arrays, client strings interned in a `Map`.
 */
class RequestCollector {
  readonly #parser = new LogLineParser();
  /** Request times in milliseconds, `count` of them. */
  times = new Float64Array(4096);
  /** Client numbers (indexes in `clientNames`), `count` of them. */
  clientOf = new Uint32Array(4096);
  count = 0;
  readonly clientNames: string[] = [];
  readonly #clientIds = new Map<string, number>();
  /** The previous request's host bytes and client number: a run of one client skips the Map. */
  readonly #lastHost = new Uint8Array(LAST_CLIENT_BYTES);
  #lastHostLength = -1;
  #lastClient = 0;
  /** Lines seen, counting empty lines. */
  lineNumber = 0;
  malformed = 0;
  /** Empty lines not yet counted: malformed if a non-empty line follows, ignored at the end. */
  #pendingEmpty = 0;
  readonly examples: MalformedLine[] = [];
  readonly #maxExamples: number;

  constructor(maxExamples: number) {
    this.#maxExamples = maxExamples;
  }

  /** Takes the line in `bytes[start, end)`, without its `\n`. */
  line(bytes: Buffer, start: number, end: number): void {
    this.lineNumber++;
    if (end === start || (end === start + 1 && bytes[start] === CR)) {
      this.#pendingEmpty++;
      return;
    }
    if (this.#pendingEmpty > 0) this.#flushEmpty();
    if (end - start > MAX_LINE_BYTES) {
      this.#addMalformed(R_TOO_LONG, bytes, start, end, this.lineNumber);
      return;
    }
    const parser = this.#parser;
    if (!parser.parse(bytes, start, end)) {
      this.#addMalformed(parser.reason, bytes, start, end, this.lineNumber);
      return;
    }
    const client = this.#clientNumber(bytes, start, parser.clientEnd);
    const index = this.count;
    if (index === this.times.length) this.#grow();
    this.times[index] = parser.timeMs;
    this.clientOf[index] = client;
    this.count = index + 1;
  }

  /** Takes a line longer than {@link MAX_LINE_BYTES} of which only `prefix` was kept. */
  tooLong(prefix: Buffer): void {
    this.lineNumber++;
    if (this.#pendingEmpty > 0) this.#flushEmpty();
    this.#addMalformed(R_TOO_LONG, prefix, 0, prefix.length, this.lineNumber);
  }

  /** The client number of the host in `bytes[start, end)`, interning it when new. */
  #clientNumber(bytes: Buffer, start: number, end: number): number {
    const length = end - start;
    const last = this.#lastHost;
    if (length === this.#lastHostLength) {
      let i = 0;
      while (i < length && bytes[start + i] === last[i]) i++;
      if (i === length) return this.#lastClient;
    }
    const name = decodeClient(bytes, start, this.#parser);
    let client = this.#clientIds.get(name);
    if (client === undefined) {
      client = this.clientNames.length;
      this.#clientIds.set(name, client);
      this.clientNames.push(name);
    }
    if (length <= LAST_CLIENT_BYTES) {
      for (let i = 0; i < length; i++) last[i] = bytes[start + i] as number;
      this.#lastHostLength = length;
      this.#lastClient = client;
    } else {
      this.#lastHostLength = -1;
    }
    return client;
  }

  #grow(): void {
    const times = new Float64Array(this.times.length * 2);
    times.set(this.times);
    this.times = times;
    const clientOf = new Uint32Array(this.clientOf.length * 2);
    clientOf.set(this.clientOf);
    this.clientOf = clientOf;
  }

  #flushEmpty(): void {
    const first = this.lineNumber - this.#pendingEmpty;
    for (let line = first; line < this.lineNumber; line++) {
      this.#addMalformed(R_EMPTY, EMPTY, 0, 0, line);
    }
    this.#pendingEmpty = 0;
  }

  #addMalformed(reason: number, bytes: Buffer, start: number, end: number, line: number): void {
    this.malformed++;
    if (this.examples.length >= this.#maxExamples) return;
    let stop = Math.min(end, start + EXAMPLE_BYTES);
    if (stop === end && stop > start && bytes[stop - 1] === CR) stop--;
    const text = escapeControls(bytes.toString('utf8', start, stop).slice(0, 80));
    this.examples.push({ line, reason: MALFORMED_REASONS[reason] ?? 'malformed', text });
  }
}

const EMPTY = Buffer.alloc(0);

/** Escapes control characters (C0, DEL, C1) as `\xHH` so that a line cannot drive a terminal. */
function escapeControls(text: string): string {
  return text.replace(/[\x00-\x1f\x7f-\x9f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/**
 * Splits a stream of chunks into lines and hands them to `collector`, carrying a partial last
 * line over to the next chunk. A UTF-8 byte-order mark at the very start is skipped.
 */
async function collectLines(
  source: AsyncIterable<Uint8Array | string>,
  collector: RequestCollector,
  onChunk: (chunkBytes: number) => void,
): Promise<void> {
  /** Pieces of the current partial line (only its first bytes once it is too long). */
  let carry: Buffer[] = [];
  let carryLength = 0;
  let first = true;

  const keep = (piece: Buffer): void => {
    if (carryLength <= MAX_LINE_BYTES) {
      if (carryLength + piece.length > MAX_LINE_BYTES) {
        // Too long to keep: hold on to a copy of its start only, for the example text.
        const prefix = Buffer.concat([...carry, piece], carryLength + piece.length);
        carry = [Buffer.from(prefix.subarray(0, EXAMPLE_BYTES))];
      } else {
        carry.push(piece);
      }
    }
    carryLength += piece.length;
  };

  for await (const raw of source) {
    const chunk = toBuffer(raw);
    onChunk(chunk.length);
    let pos = 0;
    if (first && chunk.length > 0) {
      first = false;
      if (chunk.length >= 3 && chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) pos = 3;
    }
    if (carryLength > 0) {
      const newline = chunk.indexOf(NEWLINE, pos);
      if (newline === -1) {
        if (pos < chunk.length) keep(chunk.subarray(pos));
        continue;
      }
      const total = carryLength + newline - pos;
      if (total > MAX_LINE_BYTES) {
        collector.tooLong(carry[0] ?? EMPTY);
      } else {
        const line = Buffer.concat([...carry, chunk.subarray(pos, newline)], total);
        collector.line(line, 0, total);
      }
      carry = [];
      carryLength = 0;
      pos = newline + 1;
    }
    let newline: number;
    while ((newline = chunk.indexOf(NEWLINE, pos)) !== -1) {
      collector.line(chunk, pos, newline);
      pos = newline + 1;
    }
    if (pos < chunk.length) keep(chunk.subarray(pos));
  }
  if (carryLength > MAX_LINE_BYTES) {
    collector.tooLong(carry[0] ?? EMPTY);
  } else if (carryLength > 0) {
    const line = Buffer.concat(carry, carryLength);
    collector.line(line, 0, carryLength);
  }
}

function toBuffer(chunk: Uint8Array | string): Buffer {
  if (typeof chunk === 'string') return Buffer.from(chunk, 'utf8');
  if (Buffer.isBuffer(chunk)) return chunk;
  return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
}

/**
 * The order of the requests by time, ties in index (file) order: a stable sort of the indexes
 * `0 … count - 1` by `times[i]`.
 *
 * When every time is a whole number of seconds after the earliest and the span in seconds is at
 * most `maxBuckets`, a counting sort by second (O(count + span), stable by construction);
 * otherwise a comparison sort with the index as tie-breaker.
 *
 * @param times - times in **milliseconds**; only the first `count` are read.
 * @param maxBuckets - the largest span, in seconds, for the counting sort. Default
 *   `max(2^16, 2 * count)`, so that its memory stays within 8 bytes per request.
 */
export function sortByTime(
  times: Float64Array,
  count: number,
  maxBuckets = Math.max(1 << 16, 2 * count),
): Uint32Array {
  const order = new Uint32Array(count);
  if (count === 0) return order;
  let min = Infinity;
  let max = -Infinity;
  for (let i = 0; i < count; i++) {
    const t = times[i] as number;
    if (t < min) min = t;
    if (t > max) max = t;
  }
  const span = (max - min) / 1000;
  let wholeSeconds = span + 1 <= maxBuckets;
  for (let i = 0; wholeSeconds && i < count; i++) {
    const bucket = ((times[i] as number) - min) / 1000;
    if (bucket !== Math.floor(bucket)) wholeSeconds = false;
  }
  if (wholeSeconds) {
    const starts = new Uint32Array(span + 2);
    for (let i = 0; i < count; i++) {
      const bucket = ((times[i] as number) - min) / 1000;
      starts[bucket + 1]!++;
    }
    for (let b = 1; b < starts.length; b++) starts[b]! += starts[b - 1] as number;
    for (let i = 0; i < count; i++) {
      const bucket = ((times[i] as number) - min) / 1000;
      order[starts[bucket]!++] = i;
    }
    return order;
  }
  if (wholeSeconds && count >= RADIX_MIN_COUNT && span < 2 ** 32) {
    return radixSortBySecond(times, count, min, order);
  }
  for (let i = 0; i < count; i++) order[i] = i;
  order.sort((a, b) => (times[a] as number) - (times[b] as number) || a - b);
  return order;
}

/** Below this many requests the comparison sort is as fast as the radix sort. */
const RADIX_MIN_COUNT = 4_096;

/**
 * A stable LSD radix sort of the indexes by whole second after `min`, in two 16-bit passes:
 * O(count) for spans of up to 2^32 seconds, with two index arrays and 2^16 counters.
 */
function radixSortBySecond(times: Float64Array, count: number, min: number, order: Uint32Array): Uint32Array {
  const keys = new Uint32Array(count);
  for (let i = 0; i < count; i++) keys[i] = ((times[i] as number) - min) / 1000;
  let from: Uint32Array = new Uint32Array(count);
  for (let i = 0; i < count; i++) from[i] = i;
  let to: Uint32Array = order;
  const counts = new Uint32Array(1 << 16);
  for (const shift of [0, 16]) {
    counts.fill(0);
    for (let i = 0; i < count; i++) counts[((keys[from[i] as number] as number) >>> shift) & 0xffff]!++;
    let sum = 0;
    for (let b = 0; b < counts.length; b++) {
      const c = counts[b] as number;
      counts[b] = sum;
      sum += c;
    }
    for (let i = 0; i < count; i++) {
      const index = from[i] as number;
      to[counts[((keys[index] as number) >>> shift) & 0xffff]!++] = index;
    }
    [from, to] = [to, from];
  }
  return from;
}

/**
 * Replays an access log through a {@link RateLimiter} with the strategy named by `strategy`
 * (default: the exact sliding-window log): each valid line is one request by its client (the first field) at its time; requests
 * are decided in time order (ties in file order), the limiter's clock set to each request's time.
 *
 * @returns the {@link ReplaySummary}.
 * @throws {ReplayInputError} when the input cannot be read (missing file, permission denied,
 *   a directory, corrupt gzip data).
 * @throws a `RangeError` / `TypeError` naming `strategy` when it is not one of
 *   {@link STRATEGY_NAMES}.
 * @throws a `RangeError` / `TypeError` from {@link RateLimiter} for an invalid `threshold`
 *   (including one above the strategy's `maxThreshold`: 1,048,576 for the sliding-window log) or
 *   `windowSeconds`.
 */
export async function replay(options: ReplayOptions): Promise<ReplaySummary> {
  const threshold = options.threshold ?? REPLAY_DEFAULTS.threshold;
  const windowSeconds = options.windowSeconds ?? REPLAY_DEFAULTS.windowSeconds;
  const top = options.top ?? REPLAY_DEFAULTS.top;
  const progress = options.progress ?? silentProgress;
  const timer = options.timer ?? (() => performance.now());
  const input = options.input;

  // Validate the strategy and the limit before reading anything.
  const strategy = createStrategy(options.strategy ?? REPLAY_DEFAULTS.strategy);
  let current = 0;
  const limiter = new RateLimiter({ threshold, windowSeconds, strategy, clock: () => current });

  const started = timer();
  const collector = new RequestCollector(
    options.maxMalformedExamples ?? REPLAY_DEFAULTS.maxMalformedExamples,
  );
  await readInput(input, options.gzip, collector, progress);

  const count = collector.count;
  const times = collector.times;
  const clientOf = collector.clientOf;
  const names = collector.clientNames;
  const order = sortByTime(times, count);

  const requestsOf = new Uint32Array(names.length);
  const rejectedOf = new Uint32Array(names.length);
  let rejected = 0;
  // Forget clients whose window is clear once the limiter tracks many: amortized O(1) per
  // request, and decisions are unchanged (a swept key decides as a fresh one).
  let nextSweep = 1 << 16;
  for (let k = 0; k < count; k++) {
    const i = order[k] as number;
    const client = clientOf[i] as number;
    current = times[i] as number;
    requestsOf[client]!++;
    if (!limiter.allowRequestSync(names[client] as string).allowed) {
      rejectedOf[client]!++;
      rejected++;
    }
    if ((k & 0xffff) === 0xffff) {
      progress.replaying(k + 1, count);
      if (limiter.size >= nextSweep) {
        limiter.cleanUp();
        nextSweep = Math.max(1 << 16, limiter.size * 2);
      }
    }
  }

  const limited: number[] = [];
  for (let c = 0; c < names.length; c++) if (rejectedOf[c]! > 0) limited.push(c);
  limited.sort((a, b) => {
    const byRejected = (rejectedOf[b] as number) - (rejectedOf[a] as number);
    if (byRejected !== 0) return byRejected;
    const nameA = names[a] as string;
    const nameB = names[b] as string;
    return nameA < nameB ? -1 : nameA > nameB ? 1 : 0;
  });
  const topLimited = limited.slice(0, top).map((c) => ({
    client: names[c] as string,
    rejected: rejectedOf[c] as number,
    requests: requestsOf[c] as number,
  }));
  const seconds = (timer() - started) / 1000;
  progress.done();

  const lines = count + collector.malformed;
  return {
    threshold,
    windowSeconds,
    strategy: limiter.strategy.name,
    lines,
    requests: count,
    allowed: count - rejected,
    rejected,
    clients: names.length,
    clientsLimited: limited.length,
    malformed: collector.malformed,
    topLimited,
    malformedExamples: collector.examples,
    seconds,
    linesPerSecond: seconds > 0 ? lines / seconds : 0,
  };
}

/**
 * Reads `input` (a path or a stream) into `collector`, gunzipping it when it starts with the gzip
 * magic bytes `1f 8b` (whatever its name, stdin included) or when `gzipOption` says so.
 */
async function readInput(
  input: ReplayInput,
  gzipOption: boolean | undefined,
  collector: RequestCollector,
  progress: ProgressReporter,
): Promise<void> {
  const label = typeof input === 'string' ? `\`${input}\`` : 'the input';
  try {
    let source: AsyncIterable<Uint8Array | string>;
    let read: () => number;
    let total: number | undefined;
    if (typeof input === 'string') {
      const handle = await open(input, 'r');
      try {
        const stat = await handle.stat();
        if (stat.isDirectory()) throw new ReplayInputError(`cannot read ${label}: is a directory`);
        total = stat.isFile() ? stat.size : undefined;
      } catch (error) {
        await handle.close();
        throw error;
      }
      const file = handle.createReadStream({ highWaterMark: 1 << 20 });
      source = file;
      read = () => file.bytesRead;
    } else {
      let bytesRead = 0;
      source = (async function* counted(): AsyncGenerator<Buffer> {
        for await (const chunk of input) {
          const bytes = toBuffer(chunk);
          bytesRead += bytes.length;
          yield bytes;
        }
      })();
      read = () => bytesRead;
    }
    const onChunk = (): void => progress.reading(read(), total, collector.lineNumber);
    const sink = (lines: AsyncIterable<Buffer>): Promise<void> => collectLines(lines, collector, onChunk);

    // Look at the first chunk to tell gzip data from text, then read it and the rest.
    const iterator = source[Symbol.asyncIterator]();
    const first = await iterator.next();
    if (first.done === true) return;
    const head = toBuffer(first.value);
    const all = (async function* all(): AsyncGenerator<Buffer> {
      try {
        yield head;
        for (;;) {
          const next = await iterator.next();
          if (next.done === true) return;
          yield toBuffer(next.value);
        }
      } finally {
        // Stopped early (a gzip error): release the file or stream now, not at garbage collection.
        await iterator.return?.();
      }
    })();
    const gzip = gzipOption ?? (head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b);
    if (gzip) {
      await pipeline(all, createGunzip({ chunkSize: 1 << 16 }), sink);
    } else {
      await sink(all);
    }
  } catch (error) {
    throw inputError(error, label);
  } finally {
    progress.done();
  }
}

/** Turns an error from opening or reading the input into a {@link ReplayInputError}. */
function inputError(error: unknown, label: string): unknown {
  if (error instanceof ReplayInputError) return error;
  if (!(error instanceof Error)) return error;
  const code = (error as NodeJS.ErrnoException).code;
  if (typeof code !== 'string') return error; // a bug, not the input: let it surface as such
  if (code.startsWith('Z_')) {
    return new ReplayInputError(`cannot read ${label}: not valid gzip data (${error.message})`);
  }
  const reason = SYSTEM_ERRORS[code] ?? error.message;
  return new ReplayInputError(`cannot read ${label}: ${reason}`);
}

const SYSTEM_ERRORS: Record<string, string> = {
  ENOENT: 'no such file or directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EISDIR: 'is a directory',
  ENOTDIR: 'a component of the path is not a directory',
  ELOOP: 'too many symbolic links',
  ENAMETOOLONG: 'file name too long',
  EIO: 'input/output error',
};

/** How {@link formatSummary} names the input. */
export interface InputLabel {
  /** The input as shown: a path, `-` for stdin. */
  readonly file: string;
  /** Whether it is the built-in sample. */
  readonly sample: boolean;
}

/** The human-readable report of a replay, lines ending in `\n`. */
export function formatSummary(summary: ReplaySummary, input: InputLabel): string {
  const out: string[] = [];
  const title =
    input.file === '-' ? '<stdin>' : input.sample ? `built-in sample (${input.file})` : input.file;
  out.push(`ratewarden replay: ${title}`);
  const per = summary.threshold === 1 ? 'request' : 'requests';
  out.push(
    `limit: ${summary.threshold} ${per} per ${summary.windowSeconds} s per client (${summary.strategy})`,
  );
  const rows: [string, number, string][] = [
    ['requests', summary.requests, ''],
    ['allowed', summary.allowed, share(summary.allowed, summary.requests)],
    ['rejected', summary.rejected, share(summary.rejected, summary.requests)],
    ['clients', summary.clients, ''],
    ['clients limited', summary.clientsLimited, ''],
    ['malformed lines', summary.malformed, ''],
  ];
  const width = Math.max(7, ...rows.map(([, value]) => String(value).length));
  for (const [label, value, extra] of rows) {
    out.push(`${label.padEnd(16)}${String(value).padStart(width)}${extra}`);
  }
  const topLimited = summary.topLimited;
  if (topLimited.length > 0) {
    out.push('top limited clients (rejected / requests):');
    const clientWidth = Math.max(...topLimited.map((c) => c.client.length));
    const rejectedWidth = Math.max(...topLimited.map((c) => String(c.rejected).length));
    const requestsWidth = Math.max(...topLimited.map((c) => String(c.requests).length));
    for (const c of topLimited) {
      out.push(
        `  ${c.client.padEnd(clientWidth)}  ${String(c.rejected).padStart(rejectedWidth)} / ` +
          String(c.requests).padStart(requestsWidth),
      );
    }
  }
  out.push(
    `processed ${summary.lines} lines in ${formatDuration(summary.seconds)} ` +
      `(${groupDigits(summary.linesPerSecond)} lines/s)`,
  );
  return `${out.join('\n')}\n`;
}

/** The JSON report of a replay: one object, keys in snake_case. */
export function summaryToJson(summary: ReplaySummary, input: InputLabel): Record<string, unknown> {
  return {
    file: input.file,
    sample: input.sample,
    threshold: summary.threshold,
    window_seconds: summary.windowSeconds,
    strategy: summary.strategy,
    lines: summary.lines,
    requests: summary.requests,
    allowed: summary.allowed,
    rejected: summary.rejected,
    clients: summary.clients,
    clients_limited: summary.clientsLimited,
    malformed: summary.malformed,
    top_limited: summary.topLimited.map(({ client, rejected, requests }) => ({
      client,
      rejected,
      requests,
    })),
    seconds: Math.round(summary.seconds * 1e6) / 1e6,
    lines_per_second: Math.round(summary.linesPerSecond),
  };
}

function share(part: number, whole: number): string {
  return whole > 0 ? `  (${((part / whole) * 100).toFixed(2)}%)` : '';
}

/** `0.0123` → `"12.3 ms"`, `2.5` → `"2.50 s"`. */
function formatDuration(seconds: number): string {
  return seconds < 1 ? `${(seconds * 1000).toFixed(1)} ms` : `${seconds.toFixed(2)} s`;
}
