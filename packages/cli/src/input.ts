/**
 * Reading the input of a replay: a file or a stream (stdin), gunzipped when its first bytes are
 * the gzip magic number, split into lines that go to a {@link RequestCollector}; and the
 * {@link ReplayInputError} that an unreadable input (missing file, directory, corrupt gzip data)
 * becomes.
 *
 * @module
 */

import { fstatSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import type { ProgressReporter } from './progress.js';
import { EMPTY, EXAMPLE_BYTES, MAX_LINE_BYTES, type RequestCollector } from './request-collector.js';

/**
 * The input of a replay: a file path, or the bytes themselves as an async iterable of chunks
 * (a readable stream such as `process.stdin`; string chunks are read as UTF-8).
 */
export type ReplayInput = string | AsyncIterable<Uint8Array | string>;

/** The input could not be read: a missing or unreadable file, a corrupt gzip stream. */
export class ReplayInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ReplayInputError';
  }
}

const NEWLINE = 0x0a;

/**
 * Reads `input` (a path or a stream) into `collector`, gunzipping it when it starts with the gzip
 * magic bytes `1f 8b` (whatever its name, stdin included) or when `gzipOption` says so.
 *
 * @throws {ReplayInputError} when the input cannot be read.
 */
export async function readInput(
  input: ReplayInput,
  gzipOption: boolean | undefined,
  collector: RequestCollector,
  progress: ProgressReporter,
): Promise<void> {
  const label = typeof input === 'string' ? `\`${input}\`` : 'the input';
  try {
    let source: AsyncIterable<Uint8Array | string>;
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
      source = handle.createReadStream({ highWaterMark: 1 << 20 });
    } else {
      source = input;
    }
    // Bytes of the input consumed so far: counted as they are taken from the source, not as the
    // file is read ahead; for gzip data, the compressed bytes the gunzip has decompressed (its
    // `bytesWritten`), not the bytes handed to it. So the progress line's share of the input
    // matches its count of lines (a small .gz file is one chunk: "100%" before its first line).
    let consumed = 0;
    let bytesRead = (): number => consumed;
    const onChunk = (): void => progress.reading(bytesRead(), total, collector.lineNumber);
    const sink = (lines: AsyncIterable<Buffer>): Promise<void> => collectLines(lines, collector, onChunk);

    // Look at the first chunk to tell gzip data from text, then read it and the rest.
    const iterator = source[Symbol.asyncIterator]();
    const first = await iterator.next();
    if (first.done === true) return;
    const head = toBuffer(first.value);
    const all = (async function* all(): AsyncGenerator<Buffer> {
      try {
        consumed += head.length;
        yield head;
        for (;;) {
          const next = await iterator.next();
          if (next.done === true) return;
          const chunk = toBuffer(next.value);
          consumed += chunk.length;
          yield chunk;
        }
      } finally {
        // Stopped early (a gzip error): release the file or stream now, not at garbage collection.
        await iterator.return?.();
      }
    })();
    const gzip = gzipOption ?? (head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b);
    if (gzip) {
      const gunzip = createGunzip({ chunkSize: 1 << 16 });
      bytesRead = () => gunzip.bytesWritten;
      await pipeline(all, gunzip, sink);
    } else {
      await sink(all);
    }
  } catch (error) {
    throw inputError(error, label);
  } finally {
    progress.done();
  }
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

  /** Hands the chunk's complete lines to the collector and keeps its partial last line. */
  const collectChunk = (chunk: Buffer): void => {
    let pos = 0;
    if (first && chunk.length > 0) {
      first = false;
      if (chunk.length >= 3 && chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) pos = 3;
    }
    if (carryLength > 0) {
      const newline = chunk.indexOf(NEWLINE, pos);
      if (newline === -1) {
        if (pos < chunk.length) keep(chunk.subarray(pos));
        return;
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
  };

  for await (const raw of source) {
    const chunk = toBuffer(raw);
    // Progress is reported once the chunk's lines are counted, so the bytes and the lines agree.
    collectChunk(chunk);
    onChunk(chunk.length);
  }
  if (carryLength > MAX_LINE_BYTES) {
    collector.tooLong(carry[0] ?? EMPTY);
  } else if (carryLength > 0) {
    const line = Buffer.concat(carry, carryLength);
    collector.line(line, 0, carryLength);
  }
}

/** A chunk as a `Buffer`: strings as UTF-8, other `Uint8Array`s viewed without a copy. */
function toBuffer(chunk: Uint8Array | string): Buffer {
  if (typeof chunk === 'string') return Buffer.from(chunk, 'utf8');
  if (Buffer.isBuffer(chunk)) return chunk;
  return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
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
  return new ReplayInputError(`cannot read ${label}: ${systemErrorReason(error)}`);
}

/**
 * A short reason for a system error (`no such file or directory` for `ENOENT`), or its message
 * when its code is not one of the usual ones.
 */
export function systemErrorReason(error: Error): string {
  const code = (error as NodeJS.ErrnoException).code;
  return (code === undefined ? undefined : SYSTEM_ERRORS[code]) ?? error.message;
}

/** Short reasons for the system errors an input can give, by error code. */
const SYSTEM_ERRORS: Record<string, string> = {
  ENOENT: 'no such file or directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EISDIR: 'is a directory',
  ENOTDIR: 'a component of the path is not a directory',
  ELOOP: 'too many symbolic links',
  ENAMETOOLONG: 'file name too long',
  EIO: 'input/output error',
  ENOSPC: 'no space left on device',
  EFBIG: 'file too large',
};

/**
 * What standard input is, as `fstat` sees it, for `ratewarden replay` with no FILE: `'pipe'` (a
 * FIFO: `zcat access.log.gz | ratewarden replay`) and `'file'` (`ratewarden replay < access.log`)
 * are read as the log; `'socket'` (what Node's `child_process` gives a child by default, and keeps
 * open as long as the parent does) is not read, since nothing tells whether data will ever come;
 * `'other'` is a terminal, `/dev/null` or another device, or a closed descriptor. (ripgrep's
 * `is_readable_stdin` asks the same question.)
 *
 * @param fd - the descriptor to look at; default 0, standard input.
 */
export function stdinKind(fd = 0): 'pipe' | 'file' | 'socket' | 'other' {
  let stat;
  try {
    stat = fstatSync(fd);
  } catch {
    return 'other'; // closed (EBADF)
  }
  if (stat.isFIFO()) return 'pipe';
  if (stat.isFile()) return 'file';
  if (stat.isSocket()) return 'socket';
  return 'other';
}
