// The call tokens of clients that re-send (src/redis/server-link.ts): in the key's hash slot, this
// process's random part (from the global Web Crypto, not node:crypto) then a counter: never two
// alike.
import { describe, expect, it } from 'vitest';
import type { RedisAdapter } from '../../src/redis/client.js';
import { ServerLink } from '../../src/redis/server-link.js';

const adapter: RedisAdapter = {
  ratewardenAdapter: true,
  resends: true,
  evalSha: () => Promise.reject(new Error('not called')),
  eval: () => Promise.reject(new Error('not called')),
};

describe('ServerLink.tokenFor', () => {
  it('is the key, `:call:`, 12 base64url characters of this process, then a base-36 counter', () => {
    const link = new ServerLink(adapter, 'redis');
    const tokens = Array.from({ length: 1_000 }, () => link.tokenFor('api:{alice}:log'));
    const nonce = tokens[0]?.slice('api:{alice}:log:call:'.length, 'api:{alice}:log:call:'.length + 12);
    for (const token of tokens) expect(token).toMatch(/^api:\{alice\}:log:call:[A-Za-z0-9_-]{12}[0-9a-z]+$/);
    expect(tokens.every((t) => t.includes(`:call:${nonce}`))).toBe(true);
    expect(new Set(tokens).size).toBe(tokens.length);
    // Another link of the same process shares the random part and the counter.
    const other = new ServerLink(adapter, 'limiter').tokenFor('x:{u}:gcra');
    expect(other.startsWith(`x:{u}:gcra:call:${nonce}`)).toBe(true);
    expect(tokens).not.toContain(other.replace('x:{u}:gcra', 'api:{alice}:log'));
  });
});
