// The call tokens of clients that re-send (src/redis/server-link.ts): in the key's hash slot, this
// process's random part (from the global Web Crypto, not node:crypto) then a counter: never two
// alike. Two fresh instances of the module (two processes) draw different random parts, from
// crypto.getRandomValues.
import { afterEach, describe, expect, it, vi } from 'vitest';
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

describe('the random part', () => {
  afterEach(() => {
    vi.restoreAllMocks();
    vi.resetModules();
  });

  /** The first token of a fresh instance of server-link.ts (as a new process would load it). */
  async function firstTokenOfFreshModule(): Promise<string> {
    vi.resetModules();
    const fresh = await import('../../src/redis/server-link.js');
    return new fresh.ServerLink(adapter, 'redis').tokenFor('k:{u}');
  }

  it('is what crypto.getRandomValues returns (9 bytes, base64url), drawn once per process', async () => {
    const getRandomValues = vi.spyOn(globalThis.crypto, 'getRandomValues').mockImplementation(<T extends ArrayBufferView | null>(array: T): T => {
      if (array instanceof Uint8Array) array.set([0, 1, 2, 3, 4, 5, 6, 7, 8].slice(0, array.length));
      return array;
    });
    expect(await firstTokenOfFreshModule()).toBe('k:{u}:call:AAECAwQFBgcI0');
    expect(getRandomValues).toHaveBeenCalledTimes(1);
    expect(getRandomValues.mock.calls[0]?.[0]).toBeInstanceOf(Uint8Array);
    expect(getRandomValues.mock.calls[0]?.[0]).toHaveProperty('length', 9);
  });

  it('differs between two processes (two fresh instances of the module)', async () => {
    const nonce = (token: string): string => token.slice('k:{u}:call:'.length, 'k:{u}:call:'.length + 12);
    const first = nonce(await firstTokenOfFreshModule());
    const second = nonce(await firstTokenOfFreshModule());
    expect(first).toMatch(/^[A-Za-z0-9_-]{12}$/);
    expect(second).toMatch(/^[A-Za-z0-9_-]{12}$/);
    expect(first).not.toBe(second);
  });
});
