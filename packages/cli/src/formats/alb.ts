/**
 * A byte-level parser of AWS Application Load Balancer access-log entries ({@link AlbFormat}).
 *
 * An entry is fields separated by one space, some of them double-quoted, in this order (AWS,
 * "Access logs for your Application Load Balancer", Access log entries, Syntax; new fields are
 * only ever appended, and this parser ignores whatever follows the ones it reads):
 *
 * ```text
 * type time elb client:port target:port request_processing_time target_processing_time
 * response_processing_time elb_status_code target_status_code received_bytes sent_bytes
 * "request" "user_agent" ssl_cipher ssl_protocol target_group_arn "trace_id" "domain_name"
 * "chosen_cert_arn" matched_rule_priority request_creation_time "actions_executed" …
 * ```
 *
 * **Key: the client address**, the `client:port` field without its port. ALB writes an IPv6
 * client without brackets (`2001:db8::7:50718`, address then `:port`, as real entries quoted in
 * goaccess issue 2557 and fluent-plugin-elb-log issue 12 show), so the port is what follows the
 * **last** colon. A bracketed form (`[2001:db8::7]:50718`) is accepted too, brackets dropped.
 *
 * **Time: `request_creation_time`**, when the load balancer received the request: a rate
 * limiter decides when a request arrives, and `time` (when the response was sent; for
 * WebSockets, when the connection closed) can be minutes later. When that field is `-` or the
 * entry ends before it, `time` is used instead. Both are ISO 8601 with a zone (`parseIsoTime`;
 * ALB writes `2018-07-02T22:22:48.364000Z`), floored to the millisecond.
 *
 * **Every type counts** (`http`, `https`, `h2`, `grpcs`, `ws`, `wss`, and any other a future
 * ALB writes: the type is any run of lowercase letters and digits). An entry is malformed when
 * a field the parser reads is missing, empty or the wrong shape: see {@link AlbFormat.parse}.
 * The fields between `client:port` and `"request"` are checked for presence only; in the quoted
 * fields a backslash escapes the next byte.
 *
 * @module
 */

import { parseIsoTime } from './iso-time.js';
import type { LineFormat } from './format.js';

const SPACE = 0x20;
const CR = 0x0d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const MINUS = 0x2d;
const ZERO = 0x30;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/** Short reasons why an entry is malformed, as {@link AlbFormat.reason} gives them. */
export const ALB_MALFORMED_REASONS = [
  'none',
  'empty line',
  'bad type',
  'bad time',
  'no elb',
  'no client:port',
  'bad client port',
  'missing fields',
  'no quoted request',
  'unterminated request',
  'no quoted user agent',
  'unterminated user agent',
  'bad request_creation_time',
] as const;

const R_EMPTY = 1;
const R_TYPE = 2;
const R_TIME = 3;
const R_ELB = 4;
const R_CLIENT = 5;
const R_PORT = 6;
const R_FIELDS = 7;
const R_NO_REQUEST = 8;
const R_UNTERMINATED_REQUEST = 9;
const R_NO_AGENT = 10;
const R_UNTERMINATED_AGENT = 11;
const R_CREATION = 12;

/** Fields between `"user_agent"` and `request_creation_time`: ssl_cipher … matched_rule_priority. */
const FIELDS_BEFORE_CREATION = 7;

/**
 * The byte-level parser of ALB access-log entries, a {@link LineFormat}: the key is the client
 * address, the time `request_creation_time` (see the module documentation). Allocates nothing;
 * one instance is reused for every line.
 */
export class AlbFormat implements LineFormat {
  readonly name = 'alb';
  readonly keyLabel = 'client address';
  readonly timeLabel = 'request_creation_time';
  timeMs = 0;
  keyStart = 0;
  keyEnd = 0;
  readonly keyEscaped = false;
  reason: string = ALB_MALFORMED_REASONS[0];

  /**
   * Parses the entry in `bytes[start, end)` (without its `\n`; a trailing `\r` is ignored).
   * Nothing at or after `end` counts.
   *
   * Reasons of a malformed entry: `empty line`; `bad type` (not a run of lowercase letters and
   * digits followed by a space); `bad time` (`time` is not an ISO 8601 time with a zone);
   * `no elb`; `no client:port` (missing or empty, or no colon, or an empty address); `bad client
   * port` (not digits); `missing fields` (the entry ends, or a field is empty, before
   * `"request"`); `no quoted request`, `unterminated request`; `no quoted user agent`,
   * `unterminated user agent`; `bad request_creation_time` (present, not `-`, and not an ISO 8601
   * time with a zone).
   *
   * @returns whether the entry is a request; see {@link LineFormat.parse}.
   */
  parse(bytes: Uint8Array, start: number, end: number): boolean {
    if (end > start && bytes[end - 1] === CR) end--;
    if (start >= end) return this.#fail(R_EMPTY);

    // type
    let p = start;
    for (;;) {
      if (p >= end) return this.#fail(R_TYPE);
      const b = bytes[p] as number;
      if (b === SPACE) break;
      if (!((b >= 0x61 && b <= 0x7a) || (b >= ZERO && b <= 0x39))) return this.#fail(R_TYPE);
      p++;
    }
    if (p === start) return this.#fail(R_TYPE);

    // time
    const timeStart = ++p;
    while (p < end && bytes[p] !== SPACE) p++;
    const time = parseIsoTime(bytes, timeStart, p);
    if (Number.isNaN(time)) return this.#fail(R_TIME);

    // elb
    const elbStart = ++p;
    while (p < end && bytes[p] !== SPACE) p++;
    if (p === elbStart || p >= end) return this.#fail(R_ELB);

    // client:port
    const clientStart = ++p;
    let lastColon = -1;
    while (p < end && bytes[p] !== SPACE) {
      if (bytes[p] === COLON) lastColon = p;
      p++;
    }
    if (lastColon <= clientStart) return this.#fail(R_CLIENT);
    if (lastColon + 1 === p) return this.#fail(R_PORT);
    for (let i = lastColon + 1; i < p; i++) {
      if (((bytes[i] as number) - ZERO) >>> 0 > 9) return this.#fail(R_PORT);
    }
    let keyStart = clientStart;
    let keyEnd = lastColon;
    if (bytes[keyStart] === OPEN_BRACKET && bytes[keyEnd - 1] === CLOSE_BRACKET) {
      keyStart++;
      keyEnd--;
      if (keyEnd === keyStart) return this.#fail(R_CLIENT);
    }

    // target:port … sent_bytes: eight non-empty fields.
    for (let field = 0; field < 8; field++) {
      if (p >= end) return this.#fail(R_FIELDS);
      const fieldStart = ++p;
      while (p < end && bytes[p] !== SPACE) p++;
      if (p === fieldStart) return this.#fail(R_FIELDS);
    }

    // "request" "user_agent"
    p = this.#quoted(bytes, p, end, R_NO_REQUEST, R_UNTERMINATED_REQUEST);
    if (p < 0) return false;
    p = this.#quoted(bytes, p, end, R_NO_AGENT, R_UNTERMINATED_AGENT);
    if (p < 0) return false;

    // ssl_cipher … matched_rule_priority (quoted or not), then request_creation_time; an entry
    // that ends earlier, or a `-`, falls back on `time`.
    let timeMs = time;
    let field = 0;
    while (p < end && field < FIELDS_BEFORE_CREATION) {
      p = this.#skipField(bytes, p + 1, end);
      field++;
    }
    if (field === FIELDS_BEFORE_CREATION && p < end) {
      const creationStart = ++p;
      while (p < end && bytes[p] !== SPACE) p++;
      if (!(p === creationStart + 1 && bytes[creationStart] === MINUS)) {
        timeMs = parseIsoTime(bytes, creationStart, p);
        if (Number.isNaN(timeMs)) return this.#fail(R_CREATION);
      }
    }

    this.timeMs = timeMs;
    this.keyStart = keyStart;
    this.keyEnd = keyEnd;
    return true;
  }

  /**
   * A space then a quoted field at `p`: the index after its closing quote, or -1 (reason set).
   */
  #quoted(bytes: Uint8Array, p: number, end: number, missing: number, unterminated: number): number {
    if (end - p < 3 || bytes[p] !== SPACE || bytes[p + 1] !== QUOTE) {
      this.#fail(missing);
      return -1;
    }
    p += 2;
    for (;;) {
      if (p >= end) {
        this.#fail(unterminated);
        return -1;
      }
      const b = bytes[p] as number;
      if (b === QUOTE) return p + 1;
      p += b === BACKSLASH ? 2 : 1;
    }
  }

  /**
   * Skips one field starting at `p` (after its separating space), quoted or not: the index of
   * the space after it, or `end`.
   */
  #skipField(bytes: Uint8Array, p: number, end: number): number {
    if (p < end && bytes[p] === QUOTE) {
      p++;
      while (p < end && bytes[p] !== QUOTE) p += bytes[p] === BACKSLASH ? 2 : 1;
      p++;
    }
    while (p < end && bytes[p] !== SPACE) p++;
    return Math.min(p, end);
  }

  #fail(reason: number): false {
    this.reason = ALB_MALFORMED_REASONS[reason] as string;
    return false;
  }
}
