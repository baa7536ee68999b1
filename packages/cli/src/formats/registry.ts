/**
 * The registry of the access-log formats ({@link FORMATS}): one entry per format, and everything
 * the CLI knows about a format is read from its entry — its name (`--format`), how messages call
 * it, the probe `--format auto` tries on a first line, which `--key` kinds and whether
 * `--time-field`/`--time-format` apply to it (the rules `createFormat` in `detect.ts` checks, once,
 * for every format), and how its parser is built. A new format is its parser (a module with a
 * {@link LineFormat}) plus one entry here.
 *
 * @module
 */

import type { KeyChoice, KeyKind } from '../key-option.js';
import { AlbFormat } from './alb.js';
import { ClfFormat } from './clf.js';
import type { LineFormat } from './format.js';
import { parseIsoTime } from './iso-time.js';
import { JSON_TIME_FORMATS, JsonLinesFormat, type JsonTimeFormat } from './json-lines.js';

/** How a format's options are named in the errors its rules and its parser throw. */
export interface FormatOptionNames {
  /** The key option, such as `--key` (a key kind is written after it: `--key field:PATH`). */
  readonly key: string;
  /** The time field option, such as `--time-field`. */
  readonly timeField: string;
  /** The time format option, such as `--time-format`. */
  readonly timeFormat: string;
}

/** The options of a format's parser, checked against its entry's rules by `createFormat`. */
export interface FormatBuildOptions {
  /** What a request is keyed by: a kind of the entry's {@link FormatEntry.keys}. */
  readonly key: KeyChoice;
  /** The time field, a dotted path; only for an entry with {@link FormatEntry.timeFormats}. */
  readonly timeField?: string | undefined;
  /** How the time is read, one of the entry's {@link FormatEntry.timeFormats}. */
  readonly timeFormat?: string | undefined;
}

/** What the CLI knows of one format: one entry of {@link FORMATS}. */
export interface FormatEntry<Name extends string = string> {
  /** Its name, as `--format` takes it and the report's `log:` line says it. */
  readonly name: Name;
  /** How usage errors call a log of it: `a JSON-lines log`. */
  readonly title: string;
  /** What "no line of the input is in the …" says: the format, and what a line looks like. */
  readonly description: string;
  /** A few words on it after its name in `--help` (`(JSON lines: nginx escape=json, Caddy)`). */
  readonly help: string;
  /**
   * When `--format auto` tries its {@link probe}: lower first. A probe that recognises a line by
   * its first bytes comes before one that only a full parse tells (CLF's).
   */
  readonly probeOrder: number;
  /**
   * Whether the line `bytes[start, end)` (without its `\n`; a trailing `\r` is ignored) is of
   * this format. Reads nothing at or after `end`; allocates nothing.
   */
  probe(bytes: Uint8Array, start: number, end: number): boolean;
  /** The `--key` kinds it takes: `ip` (and `ip/N`), `user`, `field` (`field:PATH`). */
  readonly keys: readonly KeyKind[];
  /**
   * The `--time-format` values it takes, the default first; `undefined` when neither
   * `--time-field` nor `--time-format` applies to it.
   */
  readonly timeFormats: readonly string[] | undefined;
  /**
   * A new parser, `options` already checked against {@link keys} and {@link timeFormats}; the
   * parser's own checks (a time field's path) name the options by `names`.
   */
  create(options: FormatBuildOptions, names: FormatOptionNames): LineFormat;
}

/** An entry, its name kept as a literal type. */
function entry<const Name extends string>(value: FormatEntry<Name>): FormatEntry<Name> {
  return value;
}

const SPACE = 0x20;
const TAB = 0x09;
const CR = 0x0d;
const OPEN_BRACE = 0x7b;

/** The line without a trailing `\r`: its end. */
function trimCr(bytes: Uint8Array, start: number, end: number): number {
  return end > start && bytes[end - 1] === CR ? end - 1 : end;
}

/** The parser the CLF probe shares (it allocates nothing per line). */
const clfProbe = new ClfFormat();

/** The formats, in the order `--format` and the messages list them. */
export const FORMATS = [
  entry({
    name: 'clf',
    title: 'a Common/Combined Log Format log',
    description: 'Common or Combined Log Format (`host ident authuser [dd/Mon/yyyy:HH:MM:SS +zzzz] "request" status bytes`)',
    help: '(Common or Combined Log Format)',
    probeOrder: 3,
    // The Common/Combined Log Format parser accepts the line.
    probe: (bytes, start, end) => clfProbe.parse(bytes, start, end),
    keys: ['ip', 'user'],
    timeFormats: undefined,
    create: (options) => new ClfFormat(options.key.kind === 'user' ? 'user' : 'host'),
  }),
  entry({
    name: 'json',
    title: 'a JSON-lines log',
    description: 'JSON-lines format with the time and key fields (see `--time-field`, `--key field:PATH`)',
    help: '(JSON lines: nginx escape=json, Caddy)',
    probeOrder: 1,
    // The first byte that is not a space or a tab is `{` (the line need not be valid JSON: the
    // JSON parser then says what is wrong with it).
    probe: (bytes, start, end) => {
      end = trimCr(bytes, start, end);
      let p = start;
      while (p < end && (bytes[p] === SPACE || bytes[p] === TAB)) p++;
      return p < end && bytes[p] === OPEN_BRACE;
    },
    keys: ['ip', 'field'],
    timeFormats: JSON_TIME_FORMATS,
    create: (options, names) =>
      new JsonLinesFormat(
        {
          keyField: options.key.kind === 'field' ? options.key.path : undefined,
          timeField: options.timeField,
          timeFormat: options.timeFormat as JsonTimeFormat | undefined,
        },
        { keyField: `${names.key} field:PATH`, timeField: names.timeField, timeFormat: names.timeFormat },
      ),
  }),
  entry({
    name: 'alb',
    title: 'an AWS ALB log',
    description: 'AWS Application Load Balancer log format',
    help: '(AWS Application Load Balancer)',
    probeOrder: 2,
    // A run of lowercase letters and digits (the entry's type), one space, then an ISO 8601 time
    // with a zone up to the next space (an ALB entry's `time`).
    probe: (bytes, start, end) => {
      end = trimCr(bytes, start, end);
      let p = start;
      while (p < end && (((bytes[p] as number) >= 0x61 && (bytes[p] as number) <= 0x7a) || ((bytes[p] as number) >= 0x30 && (bytes[p] as number) <= 0x39))) p++;
      if (!(p > start && p < end && bytes[p] === SPACE)) return false;
      const timeStart = ++p;
      while (p < end && bytes[p] !== SPACE) p++;
      return !Number.isNaN(parseIsoTime(bytes, timeStart, p));
    },
    keys: ['ip'],
    timeFormats: undefined,
    create: () => new AlbFormat(),
  }),
] as const;

/** One of the formats' names, as `--format` takes it. */
export type FormatName = (typeof FORMATS)[number]['name'];

/** The names of the formats, in the registry's order. */
export const FORMAT_NAMES: readonly FormatName[] = FORMATS.map((f) => f.name);

/** The registry's entries in the order `--format auto` probes them. */
export const PROBE_ORDER: readonly FormatEntry<FormatName>[] = [...FORMATS].sort((a, b) => a.probeOrder - b.probeOrder);

/** Every `--time-format` value some format takes, each once. */
export const TIME_FORMAT_NAMES: readonly string[] = [...new Set(FORMATS.flatMap((f) => f.timeFormats ?? []))];

/** The entry of the format `name`, or `undefined` (an own name only, not `toString`). */
export function formatEntry(name: string): FormatEntry<FormatName> | undefined {
  return FORMATS.find((f) => f.name === name);
}
