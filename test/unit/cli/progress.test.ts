// The progress indicator (src/cli/progress.ts), with an injected clock.
import { describe, expect, it } from 'vitest';
import { createProgress } from '../../../src/cli/progress.js';

describe('progress', () => {
  it('rewrites one line at most once per interval and erases it at the end', () => {
    const written: string[] = [];
    let now = 0;
    const progress = createProgress({ write: (text: string) => written.push(text) }, 100, () => now);
    progress.reading(512, 2048, 10);
    now = 50;
    progress.reading(1024, 2048, 20); // throttled
    now = 150;
    progress.reading(2048, undefined, 40);
    now = 300;
    progress.replaying(5, 10);
    progress.done();
    progress.done(); // nothing more to erase
    expect(written).toEqual([
      '\rratewarden: reading 25% (512 B of 2.0 KB), 10 lines\x1b[K',
      '\rratewarden: reading 2.0 KB, 40 lines\x1b[K',
      '\rratewarden: replaying 50% (5 of 10 requests)\x1b[K',
      '\r\x1b[K',
    ]);
  });
});
