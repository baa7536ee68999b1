// Attack on issue 22's counting options through a real Express server on 127.0.0.1: 200 parallel
// requests with skipSuccessfulRequests, some handlers succeeding and some failing at the same
// time; a requestWasSuccessful that throws; both skip options; wrong types. In-memory limiter, an
// injected clock that never moves; handlers wait on a gate the test opens (no timers).
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { RateLimiter, type Reservation } from '../../src/index.js';
import { expressRateLimit } from '../../src/middleware/express.js';

let server: Server | undefined;
afterEach(async () => {
  if (server !== undefined) {
    server.closeAllConnections();
    server.close();
    await once(server, 'close');
    server = undefined;
  }
});

/** A limiter whose reservations' refunds are recorded (observation only). */
function observed(threshold: number): { limiter: RateLimiter; refunds: Promise<boolean>[] } {
  const limiter = new RateLimiter({ threshold, windowSeconds: 900, clock: () => 1_000 });
  const refunds: Promise<boolean>[] = [];
  const reserve = limiter.reserve.bind(limiter);
  limiter.reserve = async (...args: Parameters<typeof reserve>): Promise<Reservation> => {
    const r = await reserve(...args);
    const refund = (units?: number): Promise<boolean> => r.refund(units);
    return {
      ...r,
      refund: (units?: number) => {
        const p = refund(units);
        refunds.push(p);
        return p;
      },
    };
  };
  return { limiter, refunds };
}

async function listen(app: express.Express): Promise<string> {
  server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('expressRateLimit with skipSuccessfulRequests, attacked', () => {
  it('200 parallel requests, half succeeding and half failing at once: at most threshold failures ever reach the handler', async () => {
    const { limiter, refunds } = observed(5);
    let failuresHandled = 0;
    let successesHandled = 0;
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const app = express();
    app.use(expressRateLimit({ limiter, key: () => 'victim', skipSuccessfulRequests: true }));
    app.get('/login', (req, res) => {
      const ok = req.query.ok === '1';
      if (ok) successesHandled++;
      else failuresHandled++;
      void gate.then(() => res.status(ok ? 200 : 401).end());
    });
    const base = await listen(app);
    const responses = Array.from({ length: 200 }, (_, i) => fetch(`${base}/login?ok=${i % 2}`).then((r) => r.status));
    // Let every request be decided, then let the handlers answer.
    await new Promise<void>((resolve) => setImmediate(resolve));
    open();
    const statuses = await Promise.all(responses);
    await Promise.all(refunds);
    expect(failuresHandled).toBeLessThanOrEqual(5);
    expect(statuses.filter((s) => s === 401).length).toBe(failuresHandled);
    expect(statuses.filter((s) => s === 200).length).toBe(successesHandled);
    // What is left recorded is exactly the failures.
    expect((await limiter.peek('victim')).remaining).toBe(5 - failuresHandled);
  });

  it('a requestWasSuccessful that throws counts the response as failed (and reports to onError)', async () => {
    const { limiter, refunds } = observed(3);
    const errors: unknown[] = [];
    const app = express();
    app.use(
      expressRateLimit({
        limiter,
        key: () => 'k',
        skipSuccessfulRequests: true,
        requestWasSuccessful: () => {
          throw new Error('predicate broke');
        },
        onError: (e: unknown) => {
          errors.push(e);
        },
      }),
    );
    app.get('/', (_req, res) => res.status(200).end());
    const base = await listen(app);
    expect((await fetch(base)).status).toBe(200);
    await Promise.all(refunds);
    expect(refunds.length).toBe(0);
    expect((await limiter.peek('k')).remaining).toBe(2);
  });

  it.each([
    [{ skipSuccessfulRequests: true, skipFailedRequests: true }, RangeError, /skipFailedRequests/],
    [{ skipSuccessfulRequests: 'yes' }, TypeError, /skipSuccessfulRequests/],
    [{ skipFailedRequests: 1 }, TypeError, /skipFailedRequests/],
    [{ requestWasSuccessful: () => true }, TypeError, /requestWasSuccessful/],
    [{ skipSuccessfulRequests: true, requestWasSuccessful: 'status<400' }, TypeError, /requestWasSuccessful/],
  ])('rejects %o at construction, naming the option', (options, type, name) => {
    const limiter = new RateLimiter({ threshold: 1, windowSeconds: 1 });
    expect(() => expressRateLimit({ limiter, ...(options as object) })).toThrow(type);
    expect(() => expressRateLimit({ limiter, ...(options as object) })).toThrow(name);
  });
});
