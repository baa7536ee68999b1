/**
 * From lines to requests: the {@link RequestCollector} parses each line it is given with a
 * {@link LineFormat}, keeps the time and client number of each valid one in growable typed arrays
 * (key strings interned in a `Map`), and counts malformed lines, keeping the first few as
 * examples.
 *
 * Memory is about 12 bytes per request (a `Float64Array` of times, a `Uint32Array` of client
 * numbers), plus one string per distinct client; no line is kept.
 *
 * @module
 */

import { ClfFormat } from './formats/clf.js';
import { decodeJsonStringBody, decodeKeyBytes, type LineFormat } from './formats/format.js';

/** Lines longer than this many bytes (without the line ending) are malformed: `line too long`. */
export const MAX_LINE_BYTES = 1 << 20;

/**
 * @internal Bytes kept from a line too long to keep whole, for its example text: the reader
 * keeps this much of such a line and hands it to {@link RequestCollector.tooLong}.
 */
export const EXAMPLE_BYTES = 320;

/** @internal An empty buffer: the prefix of a line of which nothing was kept. */
export const EMPTY = Buffer.alloc(0);

/**
 * Picks the format of an input from a non-empty line, `bytes[start, end)` (`--format auto`):
 * called before that line is parsed, on each non-empty line until it returns a format (the first
 * line of a log may be the tail of a line cut by a rotation or a copy, in no format). While it
 * returns `undefined`, the line is parsed (and found malformed) by the Common/Combined Log Format.
 */
export type FormatChooser = (bytes: Buffer, start: number, end: number) => LineFormat | undefined;

/** A malformed line, kept as an example. */
export interface MalformedLine {
  /** The line number, from 1. */
  readonly line: number;
  /** A short reason, such as `"bad timestamp"` (the format's), `"empty line"` or `"line too long"`. */
  readonly reason: string;
  /**
   * The start of the line: at most 80 characters (UTF-16 code units), as read, control
   * characters included (the command escapes it when printing it).
   */
  readonly text: string;
}

const CR = 0x0d;
const R_EMPTY = 'empty line';
const R_TOO_LONG = 'line too long';
const R_TIME_RANGE = 'time out of range';
/**
 * The latest (and, negated, earliest) request time kept, in milliseconds: 2^47 ms from 1970
 * (about the year 6429), the limiter's clock range. A line beyond it is malformed.
 */
export const MAX_TIME_MS = 2 ** 47;
/** Keys up to this many bytes are compared with the previous line's, to skip the lookup. */
const LAST_CLIENT_BYTES = 64;

/**
 * Collects the requests of the lines it is given: times and client numbers in growable typed
 * arrays, client strings interned in a `Map`.
 */
export class RequestCollector {
  #parser: LineFormat;
  #choose: FormatChooser | undefined;
  /** Request times in milliseconds, `count` of them. */
  times = new Float64Array(4096);
  /** Client numbers (indexes in `clientNames`), `count` of them. */
  clientOf = new Uint32Array(4096);
  /** Requests collected: valid lines. */
  count = 0;
  /** The distinct clients, in order of first appearance. */
  readonly clientNames: string[] = [];
  readonly #clientIds = new Map<string, number>();
  /** The previous request's host bytes and client number: a run of one client skips the Map. */
  readonly #lastHost = new Uint8Array(LAST_CLIENT_BYTES);
  #lastHostLength = -1;
  #lastEscaped = false;
  #lastClient = 0;
  /** Lines seen, counting empty lines. */
  lineNumber = 0;
  /** Malformed lines, empty lines before a non-empty one included. */
  malformed = 0;
  /** Empty lines not yet counted: malformed if a non-empty line follows, ignored at the end. */
  #pendingEmpty = 0;
  /** The first malformed lines, in file order. */
  readonly examples: MalformedLine[] = [];
  readonly #maxExamples: number;

  /**
   * @param maxExamples - how many malformed lines to keep as {@link examples}.
   * @param format - the parser of the lines, or a function that picks it from the first
   *   non-empty line it recognises; default the Common/Combined Log Format keyed by client
   *   address.
   */
  constructor(maxExamples: number, format: LineFormat | FormatChooser = new ClfFormat()) {
    this.#maxExamples = maxExamples;
    if (typeof format === 'function') {
      this.#choose = format;
      this.#parser = new ClfFormat();
    } else {
      this.#parser = format;
    }
  }

  /** The format of the lines: the one given, or the one picked from the first line recognised (CLF before any). */
  get format(): LineFormat {
    return this.#parser;
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
    if (this.#choose !== undefined) {
      const chosen = this.#choose(bytes, start, end);
      if (chosen !== undefined) {
        this.#parser = chosen;
        this.#choose = undefined;
      }
    }
    const parser = this.#parser;
    if (!parser.parse(bytes, start, end)) {
      this.#addMalformed(parser.reason, bytes, start, end, this.lineNumber);
      return;
    }
    const timeMs = parser.timeMs;
    if (!(timeMs >= -MAX_TIME_MS && timeMs <= MAX_TIME_MS)) {
      this.#addMalformed(R_TIME_RANGE, bytes, start, end, this.lineNumber);
      return;
    }
    const client = this.#clientNumber(bytes, parser.keyStart, parser.keyEnd);
    const index = this.count;
    if (index === this.times.length) this.#grow();
    this.times[index] = timeMs;
    this.clientOf[index] = client;
    this.count = index + 1;
  }

  /** Takes a line longer than {@link MAX_LINE_BYTES} of which only `prefix` was kept. */
  tooLong(prefix: Buffer): void {
    this.lineNumber++;
    if (this.#pendingEmpty > 0) this.#flushEmpty();
    this.#addMalformed(R_TOO_LONG, prefix, 0, prefix.length, this.lineNumber);
  }

  /** The client number of the key in `bytes[start, end)`, interning it when new. */
  #clientNumber(bytes: Buffer, start: number, end: number): number {
    const length = end - start;
    const last = this.#lastHost;
    const escaped = this.#parser.keyEscaped;
    if (length === this.#lastHostLength && escaped === this.#lastEscaped) {
      let i = 0;
      while (i < length && bytes[start + i] === last[i]) i++;
      if (i === length) return this.#lastClient;
    }
    const name = escaped ? decodeJsonStringBody(bytes, start, end) : decodeKeyBytes(bytes, start, end);
    let client = this.#clientIds.get(name);
    if (client === undefined) {
      client = this.clientNames.length;
      this.#clientIds.set(name, client);
      this.clientNames.push(name);
    }
    if (length <= LAST_CLIENT_BYTES) {
      for (let i = 0; i < length; i++) last[i] = bytes[start + i] as number;
      this.#lastHostLength = length;
      this.#lastEscaped = escaped;
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

  #addMalformed(reason: string, bytes: Buffer, start: number, end: number, line: number): void {
    this.malformed++;
    if (this.examples.length >= this.#maxExamples) return;
    let stop = Math.min(end, start + EXAMPLE_BYTES);
    if (stop === end && stop > start && bytes[stop - 1] === CR) stop--;
    const text = bytes.toString('utf8', start, stop).slice(0, 80);
    this.examples.push({ line, reason, text });
  }
}
