// DECIDE_SHA is a literal (src/redis/script.ts: the Redis entry needs no hash function at run
// time); here it is recomputed from the script with node:crypto, so that a change to the Lua
// script (or to an algorithm's fragment) without the new SHA-1 fails, saying what to write.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DECIDE_SCRIPT, DECIDE_SHA } from '../../src/redis/script.js';

describe('DECIDE_SHA', () => {
  it('is the SHA-1 of DECIDE_SCRIPT, as Redis computes it for EVALSHA (of its UTF-8 bytes, lowercase hex)', () => {
    const sha = createHash('sha1').update(Buffer.from(DECIDE_SCRIPT, 'utf8')).digest('hex');
    expect(DECIDE_SHA, `the script changed: set DECIDE_SHA in src/redis/script.ts to '${sha}'`).toBe(sha);
  });
});
