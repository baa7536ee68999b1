// The Redis strategies warn once per client handed to them without an `error` listener (code
// ERR_RATEWARDEN_NO_ERROR_LISTENER), saying what happens without one. Real node-redis and ioredis
// client objects, never connected (constructing a strategy sends nothing); the crash itself, with
// a real redis-server killed, is test/integration/redis/disconnected.test.ts's.
import { Cluster, Redis } from 'ioredis';
import { createClient, createCluster } from 'redis';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ErrorCode } from '../../src/index.js';
import { RedisGCRA, RedisSlidingWindowLog, toRedisAdapter } from '../../src/redis/index.js';
import { captureWarnings } from '../support/warnings.js';

const CODE = ErrorCode.NoErrorListener;

afterEach(() => {
  vi.restoreAllMocks();
});

/** The warnings (of this code) emitted while `build` runs. */
function warningsOf(build: () => void): { message: string; type: string | undefined }[] {
  const captured = captureWarnings(CODE);
  try {
    build();
  } finally {
    captured.restore();
  }
  return captured.warnings.map(({ message, type }) => ({ message, type }));
}

describe('a client without an error listener', () => {
  it('node-redis: one RateWardenWarning per client, saying that the process crashes on the first connection error', () => {
    const client = createClient();
    expect(client.listenerCount('error')).toBe(0);
    const warnings = warningsOf(() => {
      new RedisSlidingWindowLog({ client, prefix: 'a:' });
      new RedisGCRA({ client, prefix: 'b:' }); // the same client: no second warning
    });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.type).toBe('RateWardenWarning');
    expect(warnings[0]?.message).toContain("the node-redis client given to RedisSlidingWindowLog has no 'error' listener");
    expect(warnings[0]?.message).toContain('the process crashes on the first one, before any failure policy (onFailure) can act');
    expect(warnings[0]?.message).toContain("client.on('error',");
    // Another client without one warns again.
    expect(warningsOf(() => new RedisGCRA({ client: createClient(), prefix: 'c:' }))).toHaveLength(1);
  });

  it('ioredis: says that errors are printed as unhandled, and that the process keeps running', () => {
    const client = new Redis({ lazyConnect: true });
    try {
      const warnings = warningsOf(() => new RedisGCRA({ client, prefix: 'a:' }));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]?.message).toContain("the ioredis client given to RedisGCRA has no 'error' listener");
      expect(warnings[0]?.message).toContain('[ioredis] Unhandled error event');
      expect(warnings[0]?.message).toContain('the process keeps running and onFailure decides');
    } finally {
      client.disconnect();
    }
  });

  it('clusters too: an ioredis Cluster and a node-redis cluster', () => {
    const io = new Cluster([{ host: '127.0.0.1', port: 7000 }], { lazyConnect: true });
    try {
      expect(warningsOf(() => new RedisGCRA({ client: io, prefix: 'a:' }))[0]?.message).toContain('the ioredis Cluster given to RedisGCRA');
    } finally {
      io.disconnect();
    }
    const node = createCluster({ rootNodes: [{ url: 'redis://127.0.0.1:7000' }] });
    expect(warningsOf(() => new RedisGCRA({ client: node, prefix: 'a:' }))[0]?.message).toContain('the node-redis cluster given to RedisGCRA');
  });

  it('without `process.emitWarning` (a browser, a worker), goes to console.warn with its code', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const emitWarning = Object.getOwnPropertyDescriptor(process, 'emitWarning') as PropertyDescriptor;
    Object.defineProperty(process, 'emitWarning', { value: undefined, configurable: true, writable: true });
    try {
      new RedisGCRA({ client: createClient(), prefix: 'a:' });
    } finally {
      Object.defineProperty(process, 'emitWarning', emitWarning);
    }
    expect(warn).toHaveBeenCalledTimes(1);
    expect(String(warn.mock.calls[0]?.[0])).toMatch(/has no 'error' listener\. .* \(ERR_RATEWARDEN_NO_ERROR_LISTENER\)$/);
  });
});

describe('no warning', () => {
  it('for clients with an error listener, node-redis or ioredis', () => {
    const node = createClient();
    node.on('error', () => {});
    const io = new Redis({ lazyConnect: true });
    io.on('error', () => {});
    try {
      expect(warningsOf(() => {
        new RedisGCRA({ client: node, prefix: 'a:' });
        new RedisGCRA({ client: io, prefix: 'a:' });
      })).toEqual([]);
    } finally {
      io.disconnect();
    }
  });

  it('for a RedisAdapter of one\'s own, or the adapter of a client', () => {
    const adapter = { ratewardenAdapter: true as const, evalSha: async () => [], eval: async () => [] };
    const client = createClient();
    expect(warningsOf(() => {
      new RedisGCRA({ client: adapter, prefix: 'a:' });
      new RedisGCRA({ client: toRedisAdapter(client), prefix: 'a:' });
    })).toEqual([]);
  });
});
