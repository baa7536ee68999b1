// The start-up warning of the Express and Fastify middlewares for a proxy setting that trusts
// every hop: with it, any client escapes a limit keyed by its address by sending a fresh
// X-Forwarded-For. Real servers on 127.0.0.1, real requests.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import Fastify from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RateLimiter } from '../../../src/index.js';
import { expressRateLimit } from '../../../src/middleware/express.js';
import { fastifyRateLimit } from '../../../src/middleware/fastify.js';
import { captureWarnings, type CapturedWarning } from '../../support/warnings.js';

const CODE = 'ERR_RATEWARDEN_PERMISSIVE_TRUST_PROXY';
let captured: ReturnType<typeof captureWarnings>;
beforeEach(() => {
  captured = captureWarnings(CODE);
});
afterEach(() => {
  captured.restore();
});

/** Sends `count` requests, each with a fresh forged X-Forwarded-For; returns the statuses. */
async function forge(base: string, count: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < count; i++) {
    const response = await fetch(base, { headers: { 'x-forwarded-for': `198.51.100.${i + 1}` } });
    await response.arrayBuffer();
    statuses.push(response.status);
  }
  return statuses;
}

const ours = (): CapturedWarning[] => captured.warnings;

async function expressServer(trustProxy: unknown, withKey: boolean): Promise<{ base: string; server: Server }> {
  const app = express();
  app.set('trust proxy', trustProxy);
  const limiter = new RateLimiter({ threshold: 1, windowSeconds: 60, clock: () => 0 });
  app.get('/', expressRateLimit(withKey ? { limiter, key: () => 'everyone' } : { limiter }), (_req, res) => res.send('ok'));
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

describe('express', () => {
  it.each([
    [true, 1],
    [100, 1],
    [1, 0],
    [false, 0],
    ['loopback', 0],
  ])('trust proxy %j: %i warning(s), once per middleware', async (setting, expected) => {
    const { base, server } = await expressServer(setting, false);
    try {
      const statuses = await forge(base, 3);
      expect(ours()).toHaveLength(expected);
      if (expected === 1) {
        // The misconfiguration the warning names: each forged address gets a fresh limit.
        expect(statuses).toEqual([200, 200, 200]);
        expect(ours()[0]?.type).toBe('RateWardenWarning');
        expect(ours()[0]?.message).toContain("Express's `trust proxy` setting trusts every hop");
      }
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it('says nothing when the key is the application’s own', async () => {
    const { base, server } = await expressServer(true, true);
    try {
      expect(await forge(base, 2)).toEqual([200, 429]);
      expect(ours()).toHaveLength(0);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});

describe('fastify', () => {
  it.each([
    [true, 1],
    [1, 0],
    ['127.0.0.1', 0],
    [undefined, 0],
  ])('trustProxy %j: %i warning(s)', async (trustProxy, expected) => {
    const app = Fastify(trustProxy === undefined ? {} : { trustProxy: trustProxy as boolean });
    app.addHook('onRequest', fastifyRateLimit({ limiter: new RateLimiter({ threshold: 1, windowSeconds: 60, clock: () => 0 }) }));
    app.get('/', async () => 'ok');
    await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const statuses = await forge(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, 3);
      expect(ours()).toHaveLength(expected);
      if (expected === 1) expect(statuses).toEqual([200, 200, 200]);
      if (trustProxy === undefined) expect(statuses).toEqual([200, 429, 429]);
    } finally {
      await app.close();
    }
  });
});
