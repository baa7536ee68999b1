/**
 * Printing text that came from the input (hosts, log lines, file names, option values) without
 * letting it drive the terminal: {@link escapeText} for the text report, warnings and errors,
 * {@link toJsonLine} for `--json`. A log line is written by whoever sends the request, so its
 * bytes are hostile until shown otherwise: `a\x1b[31mX\x07\rfake` would colour, ring and
 * overwrite a report printed raw.
 *
 * @module
 */

/**
 * What {@link escapeText} escapes: the backslash (its escape character); C0 controls
 * (U+0000–U+001F), DEL and C1 controls (U+007F–U+009F); the bidirectional marks, embeddings,
 * overrides and isolates (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069), which reorder
 * what follows them on the line; the line and paragraph separators U+2028 and U+2029; and lone
 * surrogates (U+D800–U+DFFF not in a pair: the `u` flag matches a pair as one code point).
 */
// Control characters are what this matches, on purpose.
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\\\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]/gu;

/**
 * What JSON text must still escape after `JSON.stringify`, which escapes C0 controls, `"`, `\`
 * and lone surrogates but leaves DEL, C1 controls, the bidirectional controls and U+2028/U+2029
 * raw (valid JSON, but they reach a terminal that shows the output).
 */
const UNSAFE_IN_JSON = /[\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;

/**
 * `text` made safe to print on a terminal, on one line: each character of `UNSAFE` above is
 * written as an escape — `\\` for a backslash, `\xHH` below U+0100 (`\x1b`, `\x07`, `\x0d`,
 * `\x9b`), `\uHHHH` above (`\u202e`, `\ud800`), lowercase hex — and everything else as it is
 * (printable ASCII, letters and symbols of any script, emoji).
 *
 * Injective: different texts give different results, since every backslash of the input is
 * doubled, so a `\` in the result either is one escaped backslash or starts an escape, and the
 * text can be read back. The result holds no character of `UNSAFE` (no control, no bidi
 * control, no lone surrogate, no line break).
 */
export function escapeText(text: string): string {
  return text.replace(UNSAFE, escapeChar);
}

/**
 * `value` as one line of JSON (no trailing newline): `JSON.stringify`, then DEL, C1 controls,
 * the bidirectional controls and U+2028/U+2029 written as `\uHHHH` escapes too. The same JSON
 * value (`JSON.parse` gives back every string exactly), and nothing a terminal would act on.
 */
export function toJsonLine(value: unknown): string {
  return JSON.stringify(value).replace(UNSAFE_IN_JSON, unicodeEscape);
}

function escapeChar(c: string): string {
  if (c === '\\') return '\\\\';
  const code = c.charCodeAt(0);
  return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : unicodeEscape(c);
}

function unicodeEscape(c: string): string {
  return `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
}
