/**
 * Reading the input of a replay: a file or a stream (stdin), gunzipped when its first bytes are
 * the gzip magic number, split into lines that go to a {@link RequestCollector}; and the
 * {@link ReplayInputError} that an unreadable input (missing file, directory, corrupt gzip data)
 * becomes.
 *
 * @module
 */

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
  const reason = SYSTEM_ERRORS[code] ?? error.message;
  return new ReplayInputError(`cannot read ${label}: ${reason}`);
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
};
