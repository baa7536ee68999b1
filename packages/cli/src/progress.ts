/**
 * A one-line progress indicator for a terminal: rewritten in place with `\r`, at most about ten
 * times a second, and erased when done.
 *
 * @module
 */

/** Receives the progress of a replay. Every method is cheap and may be called often. */
export interface ProgressReporter {
  /**
   * Reading the input: called after each chunk's lines are counted.
   * @param bytesRead - input bytes consumed so far, the last chunk's included (compressed bytes
   *   for gzip data).
   * @param totalBytes - the input's size in bytes, or `undefined` when unknown (stdin, a pipe).
   * @param lines - lines read so far, the last chunk's complete lines included.
   */
  reading(bytesRead: number, totalBytes: number | undefined, lines: number): void;
  /** Replaying: `done` of `total` requests decided. */
  replaying(done: number, total: number): void;
  /** Erases the indicator, if anything was shown. */
  done(): void;
}

/** A reporter that shows nothing. */
export const silentProgress: ProgressReporter = {
  reading() {},
  replaying() {},
  done() {},
};

/** The part of a writable stream the indicator needs. */
export interface ProgressStream {
  write(text: string): unknown;
}

/**
 * A reporter that writes a one-line indicator to `stream` (meant for a TTY: the caller checks
 * `isTTY`), at most once per `intervalMs` **milliseconds** of `now()`.
 *
 * @param now - a clock in milliseconds; default `performance.now()`.
 */
export function createProgress(
  stream: ProgressStream,
  intervalMs = 100,
  now: () => number = () => performance.now(),
): ProgressReporter {
  let last = -Infinity;
  let shown = false;
  const show = (text: string): void => {
    const t = now();
    if (t - last < intervalMs) return;
    last = t;
    shown = true;
    // Carriage return, the text, then erase to the end of the line.
    stream.write(`\r${text}\x1b[K`);
  };
  return {
    reading(bytesRead, totalBytes, lines) {
      if (now() - last < intervalMs) return;
      const size =
        totalBytes === undefined
          ? formatBytes(bytesRead)
          : `${percent(bytesRead, totalBytes)} (${formatBytes(bytesRead)} of ${formatBytes(totalBytes)})`;
      show(`ratewarden: reading ${size}, ${groupDigits(lines)} ${lines === 1 ? 'line' : 'lines'}`);
    },
    replaying(done, total) {
      if (now() - last < intervalMs) return;
      show(`ratewarden: replaying ${percent(done, total)} (${groupDigits(done)} of ${groupDigits(total)} requests)`);
    },
    done() {
      if (shown) stream.write('\r\x1b[K');
      shown = false;
    },
  };
}

function percent(part: number, whole: number): string {
  return whole > 0 ? `${Math.min(100, Math.floor((part / whole) * 100))}%` : '0%';
}

/** `1536` → `"1.5 KB"` (powers of 1024, one decimal). */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${units[unit]}`;
}

/** `1234567` → `"1,234,567"` (no locale data needed). */
export function groupDigits(value: number): string {
  return String(Math.round(value)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}
