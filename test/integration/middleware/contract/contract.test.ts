// The HTTP contract: one suite that every framework integration of ratewarden passes, each
// served on a real HTTP server on 127.0.0.1 by its adapter (adapters.ts), with real requests
// (Node's fetch) and limiters on an injected clock: no wall clock, no sleeps. The store-failure
// cases (503 under `onFailure: 'fail-closed'`, fail-open, a group with a failed member) use a
// Redis strategy whose client lost its real redis-server (one for the file, stopped before the
// tests: `stoppedRedis`), so the failure policy decides as it does in an outage.
//
// One server per adapter and describe block, started once; before each test the clock moves on
// to a time of the test's own, the limiters have forgotten every key the tests use (`reset`), and the route counts start
// from 0. Where an adapter cannot do what a test needs, its descriptor says why (`lacks`) and the
// test is skipped for it, with the reason in its title.
//
// Refunds (skipSuccessfulRequests / skipFailedRequests) are read right after the response: an
// in-memory refund is synchronous, and it is made when the server's response finishes ('finish'
// of Node's ServerResponse, emitted before this process's client can read the response; Fetch
// refunds before its handler returns), so it is done when the client holds the response.
//
// Why one file of about 840 lines: it is one contract, and `describe.each(adapters)` runs every
// case of it against every adapter, which is what makes it one contract; split by topic, each
// file would start its own servers, stopped redis-server and helpers, and a case added to one
// could be missed by a framework served in another. The per-framework half is adapters.ts.
import { once } from 'node:events';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { RateLimiter, type DecisionInfo, type RateLimiterOptions, type RateLimitResult } from '../../../../src/index.js';
import { RedisGCRA, type RedisFailurePolicy } from '../../../../src/redis/index.js';
import { RedisServer } from '../../../support/redis-server.js';
import { storeDown } from '../../../support/stores.js';
import {
  FAILING_STATUS,
  OwnResponse,
  ROUTES,
  THROWN_MESSAGE,
  adapters,
  type Adapter,
  type ContractOptions,
  type RequestView,
  type RouteName,
  type Served,
} from './adapters.js';

/**
 * The test clock, in milliseconds. Limiters never let time run backwards, so each test has a time
 * of its own, `epoch` (later than anything the previous tests read), and moves to `epoch + ms`
 * with {@link at}.
 */
let now = 0;
let epoch = 0;
const clock = (): number => now;
/** Moves the clock to `ms` milliseconds after the test began. */
const at = (ms: number): void => {
  now = epoch + ms;
};

/** A limiter of `threshold` requests per `windowSeconds` on the test clock. */
function limiter(threshold: number, windowSeconds = 60, more: Partial<RateLimiterOptions<unknown>> = {}): RateLimiter {
  return new RateLimiter({ threshold, windowSeconds, clock, ...more });
}

/**
 * A real ioredis client whose real redis-server is gone: connected to a redis-server of its own,
 * which is then stopped. Told never to reconnect (`retryStrategy` returning `null`), the client
 * ends (`status` `"end"`), so a Redis strategy on it fails at once through its `onFailure`, with
 * no timeout to wait for, and no later redis-server on the freed port can bring it back.
 */
async function stoppedRedis(): Promise<Redis> {
  const server = await RedisServer.start();
  const client = new Redis(server.url, { lazyConnect: true, retryStrategy: () => null });
  client.on('error', () => {
    // Losing the connection is the point; the strategies report it through their policy.
  });
  try {
    await client.connect();
    const ended = once(client, 'end');
    await server.stop();
    await ended;
  } finally {
    await server.stop(); // nothing to do once stopped
  }
  return client;
}

/** The one stopped Redis of this file, for the store-failure cases of every adapter. */
const redisDown = await stoppedRedis();
afterAll(() => {
  redisDown.disconnect();
});

/**
 * A limiter of `threshold` requests per `windowSeconds` whose store is Redis, down: a `RedisGCRA`
 * on {@link redisDown} that decides by `onFailure` (each limiter under a prefix of its own).
 */
let redisLimiters = 0;
function redisLimiter(onFailure: RedisFailurePolicy, threshold: number, windowSeconds = 60): RateLimiter {
  const strategy = new RedisGCRA({ client: redisDown, onFailure, prefix: `contract-${++redisLimiters}:` });
  return new RateLimiter({ threshold, windowSeconds, clock, strategy });
}

/** The keys the tests use: every limiter forgets them before each test. */
const KEYS = ['alpha', 'beta', 'pro:alpha', 'all'];

/** The key of most servers: the `x-client` header, else `alpha`. */
const client = (req: RequestView): string => req.header('x-client') ?? 'alpha';

/** The contract server of one describe block. */
interface Server {
  /** A GET of `route` with `headers`. */
  get(route: RouteName, headers?: Record<string, string>): Promise<Response>;
  /** How many times `route`'s handler ran in this test. */
  handled(route: RouteName): number;
}

/**
 * Serves `options` with `adapter` for the tests of the enclosing describe block (started in its
 * beforeAll, stopped in its afterAll); before each test: the clock at a new `epoch`, every limiter of
 * `options` reset for every one of {@link KEYS}, and the route counts from 0.
 */
function serve(adapter: Adapter, options: ContractOptions): Server {
  let served: Served | undefined;
  const started = (): Served => {
    if (served === undefined) throw new Error(`the ${adapter.name} server did not start`);
    return served;
  };
  const limiters = options.limiter instanceof RateLimiter ? [options.limiter] : options.limiter.map((member) => member.limiter);
  const baseline = new Map<RouteName, number>();
  beforeAll(async () => {
    served = await adapter.start(options);
  });
  afterAll(async () => {
    await served?.stop();
  });
  beforeEach(() => {
    // Past the longest window and block of the tests, for good measure (the keys are reset too).
    epoch = now + 10_000_000;
    now = epoch;
    for (const one of limiters) for (const key of KEYS) one.reset(key);
    for (const route of ROUTES) baseline.set(route, started().handled(route));
  });
  return {
    get: (route, headers = {}) => fetch(`${started().origin}/${route}`, { headers }),
    handled: (route) => started().handled(route) - (baseline.get(route) ?? 0),
  };
}

/** The counters of `one` since `before` (a `stats()` snapshot). */
function decidedSince(one: RateLimiter, before: ReturnType<RateLimiter['stats']>): { allowed: number; rejected: number; shadowRejected: number } {
  const after = one.stats();
  return { allowed: after.allowed - before.allowed, rejected: after.rejected - before.rejected, shadowRejected: after.shadowRejected - before.shadowRejected };
}

/**
 * A response as the contract checks it: its status, `Content-Type`, `Retry-After`,
 * `RateLimit-Policy` and `RateLimit` (`null` where absent) and its JSON body (compared whole
 * with `toEqual`, or in part with `toMatchObject`: `body: { retryAfter: 1 }` of a 429,
 * `body: { route: 'limited' }` of a handler's answer).
 */
async function answered(response: Response): Promise<{
  status: number;
  contentType: string | null;
  retryAfter: string | null;
  policy: string | null;
  rateLimit: string | null;
  body: unknown;
}> {
  const field = (name: string): string | null => response.headers.get(name);
  return {
    status: response.status,
    contentType: field('content-type'),
    retryAfter: field('retry-after'),
    policy: field('ratelimit-policy'),
    rateLimit: field('ratelimit'),
    body: (await response.json()) as unknown,
  };
}

/** The default 429 body (RFC 9457) of a client over a limit of `limit`, to retry in `retryAfter` s. */
const tooManyRequests = (limit: number, retryAfter: number): object => ({
  type: 'about:blank',
  title: 'Too Many Requests',
  status: 429,
  detail: `Rate limit of ${limit} exceeded; retry in ${retryAfter} s.`,
  retryAfter,
});

/** The default 429 body of a request that costs more than the limit of `limit`: no `retryAfter`. */
const neverAccepted = (limit: number): object => ({
  type: 'about:blank',
  title: 'Too Many Requests',
  status: 429,
  detail: `This request costs more than the limit of ${limit} allows; it can never be accepted.`,
});

/** The default 503 body of a request refused because a store could not be reached. */
const storeUnavailable = (retryAfter: number): object => ({
  type: 'about:blank',
  title: 'Rate limit store unavailable',
  status: 503,
  detail: `This request was refused because the rate limit's store could not be reached, not because the client exceeded the limit; retry in ${retryAfter} s.`,
  retryAfter,
});

/** `title`, with the reason it is skipped when the adapter lacks what it needs. */
const titled = (title: string, lacking: string | undefined): string => (lacking === undefined ? title : `${title} (skipped: ${lacking})`);

describe.each(adapters)('$name: the HTTP contract', (adapter) => {
  describe('RateLimit headers and the 429', () => {
    const api = limiter(2);
    const server = serve(adapter, { limiter: api, key: client });

    it('allowed: RateLimit-Policy and RateLimit, no Retry-After nor legacy fields; refused: a 429 RFC 9457 problem with Retry-After, the handler not run; the window clearing lets the client in', async () => {
      const first = await server.get('limited');
      expect(first.status).toBe(200);
      expect(await first.json()).toEqual({ route: 'limited' });
      expect(first.headers.get('ratelimit-policy')).toBe('"default";q=2;w=60');
      expect(first.headers.get('ratelimit')).toBe('"default";r=1;t=60');
      expect(first.headers.get('retry-after')).toBeNull();
      expect(first.headers.get('x-ratelimit-limit')).toBeNull();
      expect((await server.get('limited')).headers.get('ratelimit')).toBe('"default";r=0;t=60');

      at(30_000);
      expect(await answered(await server.get('limited'))).toEqual({
        status: 429,
        contentType: adapter.problemContentType,
        retryAfter: '30',
        policy: '"default";q=2;w=60',
        rateLimit: '"default";r=0;t=30',
        body: tooManyRequests(2, 30),
      });
      expect(server.handled('limited')).toBe(2);

      at(60_000);
      const later = await server.get('limited');
      expect(later.status).toBe(200);
      expect(later.headers.get('ratelimit')).toBe('"default";r=1;t=60');
      expect(server.handled('limited')).toBe(3);
    });

    it('rounds Retry-After and the body’s retryAfter up to whole seconds, never 0', async () => {
      await server.get('limited');
      await server.get('limited');
      at(59_500); // half a second left
      expect(await answered(await server.get('limited'))).toMatchObject({ status: 429, retryAfter: '1', rateLimit: '"default";r=0;t=1', body: { retryAfter: 1 } });
    });

    it('limits each key on its own', async () => {
      expect((await server.get('limited', { 'x-client': 'alpha' })).status).toBe(200);
      expect((await server.get('limited', { 'x-client': 'alpha' })).status).toBe(200);
      expect((await server.get('limited', { 'x-client': 'alpha' })).status).toBe(429);
      const other = await server.get('limited', { 'x-client': 'beta' });
      expect(other.status).toBe(200);
      expect(other.headers.get('ratelimit')).toBe('"default";r=1;t=60');
      expect(api.peekSync('alpha').remaining).toBe(0);
      expect(api.peekSync('beta').remaining).toBe(1);
    });

    it('counts every decided request, whatever its response: a failing status, a handler that throws (the framework’s error path answers)', async () => {
      const failed = await server.get('failing');
      expect(failed.status).toBe(FAILING_STATUS);
      expect(failed.headers.get('ratelimit')).toBe('"default";r=1;t=60');
      expect((await server.get('throwing')).status).toBe(adapter.errorPath.status);
      expect(server.handled('throwing')).toBe(1);
      expect((await server.get('limited')).status).toBe(429);
      expect(server.handled('limited')).toBe(0);
    });

    it('leaves a route outside the limit alone: no headers, nothing counted', async () => {
      for (let i = 0; i < 3; i++) {
        const open = await server.get('unlimited');
        expect(open.status).toBe(200);
        expect(await open.json()).toEqual({ route: 'unlimited' });
        expect(open.headers.get('ratelimit')).toBeNull();
        expect(open.headers.get('ratelimit-policy')).toBeNull();
      }
      expect(server.handled('unlimited')).toBe(3);
      expect(api.peekSync('alpha').remaining).toBe(2);
    });
  });

  describe('an asynchronous key returning a User', () => {
    const api = limiter(1);
    const server = serve(adapter, { limiter: api, key: async (req) => ({ id: await Promise.resolve(client(req)) }) });

    it('is awaited, and limits by the user’s id', async () => {
      expect((await server.get('limited', { 'x-client': 'alpha' })).status).toBe(200);
      expect((await server.get('limited', { 'x-client': 'beta' })).status).toBe(200);
      expect((await server.get('limited', { 'x-client': 'alpha' })).status).toBe(429);
      expect(api.peekSync({ id: 'alpha' }).remaining).toBe(0);
    });
  });

  describe('legacyHeaders (and mode: enforce, the default, given)', () => {
    const api = limiter(2);
    const server = serve(adapter, { limiter: api, key: client, legacyHeaders: true, mode: 'enforce' });

    it('adds X-RateLimit-Limit, -Remaining and -Reset (seconds) beside the IETF fields, allowed and refused; enforce counts no shadow rejection', async () => {
      const before = api.stats();
      const first = await server.get('limited');
      expect(first.headers.get('x-ratelimit-limit')).toBe('2');
      expect(first.headers.get('x-ratelimit-remaining')).toBe('1');
      expect(first.headers.get('x-ratelimit-reset')).toBe('60');
      expect(first.headers.get('ratelimit')).toBe('"default";r=1;t=60');
      await server.get('limited');
      const refused = await server.get('limited');
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('60');
      expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
      expect(refused.headers.get('ratelimit')).toBe('"default";r=0;t=60');
      expect(server.handled('limited')).toBe(2);
      expect(decidedSince(api, before)).toEqual({ allowed: 2, rejected: 1, shadowRejected: 0 });
    });
  });

  describe('standardHeaders: false', () => {
    const server = serve(adapter, { limiter: limiter(2), key: client, standardHeaders: false, legacyHeaders: true });

    it('sends no RateLimit-Policy nor RateLimit; the legacy fields and Retry-After still', async () => {
      const first = await server.get('limited');
      expect(first.headers.get('x-ratelimit-remaining')).toBe('1');
      expect(first.headers.get('ratelimit')).toBeNull();
      expect(first.headers.get('ratelimit-policy')).toBeNull();
      await server.get('limited');
      const refused = await server.get('limited');
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('60');
      expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
      expect(refused.headers.get('ratelimit')).toBeNull();
    });
  });

  describe('cost', () => {
    const server = serve(adapter, { limiter: limiter(3), key: client, cost: (req) => Number(req.header('x-cost') ?? 1) });

    it('charges each request its cost; one above the limit is refused without Retry-After (waiting cannot help)', async () => {
      expect((await server.get('limited', { 'x-cost': '2' })).headers.get('ratelimit')).toBe('"default";r=1;t=60');
      const tooMuch = await server.get('limited', { 'x-cost': '2' });
      expect(tooMuch.status).toBe(429);
      expect(tooMuch.headers.get('retry-after')).toBe('60');
      expect(await answered(await server.get('limited', { 'x-cost': '4' }))).toMatchObject({ status: 429, retryAfter: null, body: neverAccepted(3) });
      const last = await server.get('limited', { 'x-cost': '1' });
      expect(last.status).toBe(200);
      expect(last.headers.get('ratelimit')).toBe('"default";r=0;t=60');
      expect(server.handled('limited')).toBe(2);
    });
  });

  describe('a group of two limits', () => {
    const burst = limiter(2, 1);
    const hourly = limiter(3, 3600);
    const server = serve(adapter, {
      limiter: [
        { name: 'burst', limiter: burst },
        { name: 'hourly', limiter: hourly },
      ],
      key: client,
      policy: [{ windowSeconds: 1 }, { windowSeconds: 3600 }],
    });

    it('advertises both policies, by name; decides them all or nothing (a refusal by one records nothing in the other)', async () => {
      const first = await server.get('limited');
      expect(first.headers.get('ratelimit-policy')).toBe('"burst";q=2;w=1, "hourly";q=3;w=3600');
      expect(first.headers.get('ratelimit')).toBe('"burst";r=1;t=1, "hourly";r=2;t=3600');
      expect((await server.get('limited')).status).toBe(200);

      const refused = await server.get('limited'); // burst is spent; hourly has room for one more
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('1');
      expect(refused.headers.get('ratelimit')).toBe('"burst";r=0;t=1, "hourly";r=1;t=3600');
      expect(hourly.peekSync('alpha').remaining).toBe(1);

      at(1_000);
      expect((await server.get('limited')).status).toBe(200); // hourly's last unit
      const byHourly = await server.get('limited');
      expect(byHourly.status).toBe(429);
      // hourly's oldest unit (at 0 ms) leaves at 3,600 s: 3,599 s from now.
      expect(byHourly.headers.get('ratelimit')).toBe('"burst";r=1;t=1, "hourly";r=0;t=3599');
      expect(byHourly.headers.get('retry-after')).toBe('3599');
      expect(burst.peekSync('alpha').remaining).toBe(1);
      expect(server.handled('limited')).toBe(3);
    });
  });

  describe('a policy function (tiers whose windows differ)', () => {
    const pro = { threshold: 5, windowSeconds: 10 };
    const tiered = limiter(2, 60, { limitFor: (_user, key) => (key.startsWith('pro:') ? pro : undefined) });
    const server = serve(adapter, {
      limiter: tiered,
      key: client,
      policy: (_req, result) => ({ windowSeconds: result.limit === pro.threshold ? pro.windowSeconds : 60 }),
    });

    it('advertises the window of the tier that applied', async () => {
      const proUser = await server.get('limited', { 'x-client': 'pro:alpha' });
      expect(proUser.headers.get('ratelimit-policy')).toBe('"default";q=5;w=10');
      expect(proUser.headers.get('ratelimit')).toBe('"default";r=4;t=10');
      const freeUser = await server.get('limited', { 'x-client': 'alpha' });
      expect(freeUser.headers.get('ratelimit-policy')).toBe('"default";q=2;w=60');
    });
  });

  describe('skip', () => {
    const api = limiter(1);
    const server = serve(adapter, { limiter: api, key: client, skip: (req) => req.header('x-internal') === 'yes' });

    it('lets a skipped request through untouched: no headers, nothing counted', async () => {
      const before = api.stats();
      expect((await server.get('limited')).status).toBe(200);
      const skipped = await server.get('limited', { 'x-internal': 'yes' });
      expect(skipped.status).toBe(200);
      expect(skipped.headers.get('ratelimit')).toBeNull();
      expect(skipped.headers.get('ratelimit-policy')).toBeNull();
      expect((await server.get('limited')).status).toBe(429);
      expect((await server.get('limited', { 'x-internal': 'yes' })).status).toBe(200);
      expect(server.handled('limited')).toBe(3);
      expect(decidedSince(api, before)).toEqual({ allowed: 1, rejected: 1, shadowRejected: 0 });
    });
  });

  describe('when deciding fails, without onError', () => {
    const server = serve(adapter, { limiter: limiter(2, 60, { strategy: storeDown }), key: client });

    it(`takes the framework’s error path (${adapter.errorPath.status}${adapter.errorPath.showsMessage ? ', showing the error' : ', hiding it'}): no rate-limit headers, the handler not run`, async () => {
      const failed = await server.get('limited');
      expect(failed.status).toBe(adapter.errorPath.status);
      expect(failed.headers.get('ratelimit')).toBeNull();
      const path = adapter.errorPath;
      if (path.showsMessage) expect(await failed.text()).toContain('store down');
      else expect(await failed.text()).toBe(path.body);
      expect(server.handled('limited')).toBe(0);
    });

    it('takes it for a key the limiter refuses (an empty string) too', async () => {
      const failed = await server.get('limited', { 'x-client': '' });
      expect(failed.status).toBe(adapter.errorPath.status);
      const path = adapter.errorPath;
      if (path.showsMessage) expect(await failed.text()).toContain('to be a non-empty string');
      else expect(await failed.text()).toBe(path.body);
      expect(server.handled('limited')).toBe(0);
    });
  });

  describe('onError returning "allow"', () => {
    const seen: { client: string | undefined; error: unknown }[] = [];
    const server = serve(adapter, {
      limiter: limiter(2, 60, { strategy: storeDown }),
      key: client,
      onError: (req, error) => {
        seen.push({ client: req.header('x-client'), error });
        return 'allow';
      },
    });

    it('lets the request through without rate-limit headers; onError gets the request and the error', async () => {
      seen.length = 0;
      const open = await server.get('limited', { 'x-client': 'beta' });
      expect(open.status).toBe(200);
      expect(await open.json()).toEqual({ route: 'limited' });
      expect(open.headers.get('ratelimit')).toBeNull();
      expect(server.handled('limited')).toBe(1);
      expect(seen).toEqual([{ client: 'beta', error: new Error('store down') }]);
    });

    it('is not called for an error of the handler, which takes the framework’s error path', async () => {
      seen.length = 0;
      expect((await server.get('throwing')).status).toBe(adapter.errorPath.status);
      expect(server.handled('throwing')).toBe(1);
      // Only the decision's error (allowed through), not the handler's.
      expect(seen).toEqual([{ client: undefined, error: new Error('store down') }]);
      expect(seen.some(({ error }) => (error as Error).message === THROWN_MESSAGE)).toBe(false);
    });
  });

  describe.skipIf(adapter.lacks.onRejected !== undefined)(titled('onRejected', adapter.lacks.onRejected), () => {
    const server = serve(adapter, {
      limiter: limiter(1),
      key: client,
      // What to answer: the `x-answer` header says.
      onRejected: (req, result) => {
        const answer = req.header('x-answer');
        if (answer === 'text') return 'slow down';
        if (answer === 'own') return new OwnResponse(503, 'busy');
        return { error: 'slow down', wait: result.retryAfter };
      },
    });

    it('sends a string it returns as text/plain, with the 429 and the rate-limit headers', async () => {
      await server.get('limited');
      const refused = await server.get('limited', { 'x-answer': 'text' });
      expect(refused.status).toBe(429);
      expect(refused.headers.get('content-type')).toBe('text/plain; charset=utf-8');
      expect(refused.headers.get('retry-after')).toBe('60');
      expect(refused.headers.get('ratelimit')).toBe('"default";r=0;t=60');
      expect(await refused.text()).toBe('slow down');
      expect(server.handled('limited')).toBe(1);
    });

    it('sends another value it returns as JSON', async () => {
      await server.get('limited');
      const refused = await server.get('limited', { 'x-answer': 'object' });
      expect(refused.status).toBe(429);
      expect(refused.headers.get('content-type')).toBe(adapter.jsonContentType);
      expect(refused.headers.get('retry-after')).toBe('60');
      expect(await refused.json()).toEqual({ error: 'slow down', wait: 60 });
      expect(server.handled('limited')).toBe(1);
    });

    it('lets it respond itself: its own status and body, with the rate-limit headers', async () => {
      await server.get('limited');
      const own = await server.get('limited', { 'x-answer': 'own' });
      expect(own.status).toBe(503);
      expect(own.headers.get('content-type')).toMatch(/^text\/plain/);
      expect(own.headers.get('ratelimit')).toBe('"default";r=0;t=60');
      expect(own.headers.get('retry-after')).toBe('60');
      expect(await own.text()).toBe('busy');
      expect(server.handled('limited')).toBe(1);
    });
  });

  describe("a store failure under onFailure: 'fail-closed' (a Redis strategy whose redis-server is stopped)", () => {
    const errors: unknown[] = [];
    const server = serve(adapter, {
      limiter: redisLimiter('fail-closed', 2),
      key: client,
      cost: (req) => Number(req.header('x-cost') ?? 1),
      onError: (_req, error) => {
        errors.push(error);
        return undefined;
      },
    });

    it('is refused with a 503 "Rate limit store unavailable" problem and Retry-After, not a 429; the handler not run; no error (onError not called)', async () => {
      errors.length = 0;
      for (const route of ['limited', 'limited', 'failing'] as const) {
        expect(await answered(await server.get(route))).toEqual({
          status: 503,
          contentType: adapter.problemContentType,
          retryAfter: '1',
          policy: '"default";q=2;w=60',
          rateLimit: '"default";r=0;t=1',
          body: storeUnavailable(1),
        });
      }
      expect(server.handled('limited')).toBe(0);
      expect(server.handled('failing')).toBe(0);
      expect(errors).toEqual([]);
    });

    it('refuses a request that costs more than the limit with the 429 that says it can never be accepted', async () => {
      expect(await answered(await server.get('limited', { 'x-cost': '3' }))).toMatchObject({
        status: 429,
        contentType: adapter.problemContentType,
        retryAfter: null,
        body: neverAccepted(2),
      });
      expect(server.handled('limited')).toBe(0);
    });
  });

  describe.skipIf(adapter.lacks.onRejected !== undefined)(titled("onRejected, for a store failure under 'fail-closed'", adapter.lacks.onRejected), () => {
    const seen: RateLimitResult[] = [];
    const server = serve(adapter, {
      limiter: redisLimiter('fail-closed', 2),
      key: client,
      onRejected: (_req, result) => {
        seen.push(result);
        return { busy: true };
      },
    });

    it('is called with the result (degraded: fail-closed); what it returns is sent with the 503 and Retry-After', async () => {
      seen.length = 0;
      const refused = await server.get('limited');
      expect(refused.status).toBe(503);
      expect(refused.headers.get('content-type')).toBe(adapter.jsonContentType);
      expect(refused.headers.get('retry-after')).toBe('1');
      expect(refused.headers.get('ratelimit')).toBe('"default";r=0;t=1');
      expect(await refused.json()).toEqual({ busy: true });
      expect(seen).toEqual([{ allowed: false, remaining: 0, retryAfter: 1, limit: 2, resetAfter: 1, degraded: 'fail-closed' }]);
      expect(server.handled('limited')).toBe(0);
    });
  });

  describe("a store failure under onFailure: 'fail-open'", () => {
    const server = serve(adapter, { limiter: redisLimiter('fail-open', 1), key: client });

    it('lets every request through (the limit is lifted while the store is down), with the headers of a first request', async () => {
      for (let i = 0; i < 3; i++) {
        expect(await answered(await server.get('limited'))).toMatchObject({
          status: 200,
          retryAfter: null,
          policy: '"default";q=1;w=60',
          rateLimit: '"default";r=0;t=0',
          body: { route: 'limited' },
        });
      }
      expect(server.handled('limited')).toBe(3);
    });
  });

  describe("a group, one of whose limits fails closed (its store is down) and the other decides in memory", () => {
    const local = limiter(1);
    const server = serve(adapter, {
      limiter: [
        { name: 'shared', limiter: redisLimiter('fail-closed', 5) },
        { name: 'local', limiter: local },
      ],
      key: client,
    });

    it('is a 503 while only the failed store refuses; a 429 once the other limit refuses on its count too', async () => {
      const policy = '"shared";q=5;w=60, "local";q=1;w=60';
      expect(await answered(await server.get('limited'))).toEqual({
        status: 503,
        contentType: adapter.problemContentType,
        retryAfter: '1',
        policy,
        rateLimit: '"shared";r=0;t=1, "local";r=1;t=0',
        body: storeUnavailable(1),
      });
      // The group refused: the local limit recorded nothing.
      expect(local.peekSync('alpha').remaining).toBe(1);

      // The local limit's one request spent elsewhere (as by another route that shares it).
      expect(local.allowRequestSync('alpha').allowed).toBe(true);
      expect(await answered(await server.get('limited'))).toEqual({
        status: 429,
        contentType: adapter.problemContentType,
        retryAfter: '60',
        policy,
        rateLimit: '"shared";r=0;t=1, "local";r=0;t=60',
        body: tooManyRequests(1, 60),
      });
      expect(server.handled('limited')).toBe(0);
    });
  });

  describe("mode: 'shadow'", () => {
    const api = limiter(2, 60, { name: 'api' });
    const infos: [boolean, DecisionInfo][] = [];
    api.on('decision', (_key, result, _cost, info) => infos.push([result.allowed, info]));
    const server = serve(adapter, { limiter: api, key: client, mode: 'shadow' });

    it('lets every request through and tells nothing; the would-be refusals are counted, and marked shadow for listeners', async () => {
      infos.length = 0;
      const before = api.stats();
      for (let i = 0; i < 4; i++) {
        const response = await server.get('limited');
        expect(response.status).toBe(200);
        expect(await response.json()).toEqual({ route: 'limited' });
        // Off by default in shadow: clients are not told of a limit not enforced.
        expect(response.headers.get('ratelimit')).toBeNull();
        expect(response.headers.get('ratelimit-policy')).toBeNull();
        expect(response.headers.get('retry-after')).toBeNull();
      }
      expect(server.handled('limited')).toBe(4);
      expect(decidedSince(api, before)).toEqual({ allowed: 2, rejected: 2, shadowRejected: 2 });
      const info = { shadow: true, name: 'api', tier: undefined };
      expect(infos).toEqual([
        [true, info],
        [true, info],
        [false, info],
        [false, info],
      ]);
      expect(api.peekSync('alpha').remaining).toBe(0); // recorded as when enforcing
    });
  });

  describe("mode: 'shadow' with standardHeaders and legacyHeaders", () => {
    const api = limiter(1);
    const server = serve(adapter, { limiter: api, key: client, mode: 'shadow', standardHeaders: true, legacyHeaders: true });

    it('sends the fields asked for, never Retry-After, and records what enforcing records', async () => {
      const before = api.stats();
      expect((await server.get('limited')).headers.get('ratelimit')).toBe('"default";r=0;t=60');
      const second = await server.get('limited');
      expect(second.status).toBe(200);
      expect(second.headers.get('ratelimit')).toBe('"default";r=0;t=60');
      expect(second.headers.get('x-ratelimit-remaining')).toBe('0');
      expect(second.headers.get('retry-after')).toBeNull();
      expect(server.handled('limited')).toBe(2);
      expect(api.peekSync('alpha').allowed).toBe(false);
      expect(decidedSince(api, before)).toEqual({ allowed: 1, rejected: 1, shadowRejected: 1 });
    });
  });

  describe("mode: 'shadow' with a group", () => {
    const burst = limiter(1, 1, { name: 'burst' });
    const hourly = limiter(10, 3600, { name: 'hourly' });
    const server = serve(adapter, {
      limiter: [
        { name: 'burst', limiter: burst },
        { name: 'hourly', limiter: hourly },
      ],
      key: client,
      mode: 'shadow',
    });

    it('decides all or nothing, refusing nothing', async () => {
      const [burstBefore, hourlyBefore] = [burst.stats(), hourly.stats()];
      expect((await server.get('limited')).status).toBe(200);
      expect((await server.get('limited')).status).toBe(200);
      expect(server.handled('limited')).toBe(2);
      expect(decidedSince(burst, burstBefore)).toEqual({ allowed: 1, rejected: 1, shadowRejected: 1 });
      // The group refused the second request: the hourly limit recorded only the first.
      expect(decidedSince(hourly, hourlyBefore)).toEqual({ allowed: 1, rejected: 0, shadowRejected: 0 });
    });
  });

  describe('a block (blockSeconds)', () => {
    const blocking = limiter(2, 10, { blockSeconds: 900 });
    const server = serve(adapter, { limiter: blocking, key: client });

    it('Retry-After, RateLimit and the 429 body tell the block’s time, not the window’s; its end lets the client in', async () => {
      const before = blocking.stats();
      expect(await answered(await server.get('limited'))).toMatchObject({ status: 200, retryAfter: null, rateLimit: '"default";r=1;t=10', body: { route: 'limited' } });
      expect(await answered(await server.get('limited'))).toMatchObject({ status: 200, retryAfter: null, rateLimit: '"default";r=0;t=10', body: { route: 'limited' } });
      // Refused: blocked for 15 minutes, not told to come back in 10 s.
      expect(await answered(await server.get('limited'))).toMatchObject({ status: 429, retryAfter: '900', rateLimit: '"default";r=0;t=900', body: { retryAfter: 900 } });
      // The window has long cleared; the block has 299.5 s left (headers and body round up).
      at(600_500);
      expect(await answered(await server.get('limited'))).toMatchObject({ status: 429, retryAfter: '300', rateLimit: '"default";r=0;t=300', body: { retryAfter: 300 } });
      at(899_999);
      expect(await answered(await server.get('limited'))).toMatchObject({ status: 429, retryAfter: '1', rateLimit: '"default";r=0;t=1', body: { retryAfter: 1 } });
      at(900_000);
      expect(await answered(await server.get('limited'))).toMatchObject({ status: 200, retryAfter: null, rateLimit: '"default";r=1;t=10', body: { route: 'limited' } });
      expect(decidedSince(blocking, before)).toEqual({ allowed: 3, rejected: 3, shadowRejected: 0 });
      expect(blocking.stats().blocked).toBe(0);
      expect(server.handled('limited')).toBe(3);
    });
  });

  describe('a block of one member of a group (block())', () => {
    const perClient = limiter(100);
    const global = limiter(1_000, 3600);
    const server = serve(adapter, {
      limiter: [
        { name: 'client', limiter: perClient },
        { name: 'global', limiter: global, key: () => 'all' },
      ],
      key: client,
    });

    it('is told the same way; the other member is not charged (with no policy given, each limit advertises its own window)', async () => {
      const allowed = await server.get('limited');
      expect(allowed.status).toBe(200);
      expect(allowed.headers.get('ratelimit-policy')).toBe('"client";q=100;w=60, "global";q=1000;w=3600');
      await perClient.block('alpha', 120);
      const blocked = await server.get('limited');
      expect(blocked.headers.get('ratelimit-policy')).toBe('"client";q=100;w=60, "global";q=1000;w=3600');
      expect(blocked.headers.get('ratelimit')).toBe('"client";r=0;t=120, "global";r=999;t=3600');
      expect(await answered(blocked)).toMatchObject({ status: 429, retryAfter: '120', body: { retryAfter: 120 } });
      expect(global.peekSync('all').remaining).toBe(999);
    });
  });

  describe("a block in mode: 'shadow'", () => {
    const blocking = limiter(1, 10, { blockSeconds: 60 });
    const server = serve(adapter, { limiter: blocking, key: client, mode: 'shadow', standardHeaders: true });

    it('is decided, counted and reported in RateLimit, and every request goes through', async () => {
      const before = blocking.stats();
      expect(await answered(await server.get('limited'))).toMatchObject({ status: 200, rateLimit: '"default";r=0;t=10' });
      // Let through; the RateLimit field tells what the block would have done, never Retry-After.
      expect(await answered(await server.get('limited'))).toMatchObject({ status: 200, retryAfter: null, rateLimit: '"default";r=0;t=60', body: { route: 'limited' } });
      at(30_000);
      expect(await answered(await server.get('limited'))).toMatchObject({ status: 200, retryAfter: null, rateLimit: '"default";r=0;t=30', body: { route: 'limited' } });
      expect(decidedSince(blocking, before)).toEqual({ allowed: 1, rejected: 2, shadowRejected: 2 });
      expect(blocking.stats().blocked).toBe(1);
    });
  });

  describe('skipSuccessfulRequests', () => {
    const api = limiter(2);
    const server = serve(adapter, { limiter: api, key: client, skipSuccessfulRequests: true });

    it('gives a successful request back once its response is over (the headers tell the state after the decision); a failing one and a thrown handler count', async () => {
      for (let i = 0; i < 4; i++) {
        const ok = await server.get('limited');
        expect(ok.status).toBe(200);
        expect(ok.headers.get('ratelimit')).toBe('"default";r=1;t=60');
        await ok.arrayBuffer();
        expect(api.peekSync('alpha').remaining).toBe(2);
      }
      const failed = await server.get('failing');
      expect(failed.status).toBe(FAILING_STATUS);
      expect(failed.headers.get('ratelimit')).toBe('"default";r=1;t=60');
      await failed.arrayBuffer();
      expect(api.peekSync('alpha').remaining).toBe(1);
      const thrown = await server.get('throwing');
      expect(thrown.status).toBe(adapter.errorPath.status);
      await thrown.arrayBuffer();
      expect(api.peekSync('alpha').remaining).toBe(0);
      expect((await server.get('limited')).status).toBe(429);
      expect(server.handled('limited')).toBe(4);
    });
  });

  describe('skipFailedRequests', () => {
    const api = limiter(2);
    const server = serve(adapter, { limiter: api, key: client, skipFailedRequests: true });

    it('gives a failed request (a failing status, a thrown handler) back once its response is over; successful ones count', async () => {
      for (let i = 0; i < 3; i++) {
        const failed = await server.get('failing');
        expect(failed.status).toBe(FAILING_STATUS);
        expect(failed.headers.get('ratelimit')).toBe('"default";r=1;t=60');
        await failed.arrayBuffer();
        expect(api.peekSync('alpha').remaining).toBe(2);
      }
      const thrown = await server.get('throwing');
      expect(thrown.status).toBe(adapter.errorPath.status);
      await thrown.arrayBuffer();
      expect(api.peekSync('alpha').remaining).toBe(2);
      expect((await server.get('limited')).status).toBe(200);
      expect((await server.get('limited')).status).toBe(200);
      expect(api.peekSync('alpha').remaining).toBe(0);
      const refused = await server.get('limited');
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('60');
      expect(server.handled('failing')).toBe(3);
      expect(server.handled('limited')).toBe(2);
    });
  });

  describe('bad options', () => {
    const start = (unchecked: Record<string, unknown>): Promise<Served> => adapter.start({ limiter: limiter(1), key: client, unchecked });

    it('rejects an unknown option when the rate limit is built, naming it and the option meant', async () => {
      await expect(start({ standardHeader: false })).rejects.toEqual(
        expect.objectContaining({
          name: 'TypeError',
          code: 'ERR_RATEWARDEN_UNKNOWN_OPTION',
          message: `Unknown option \`standardHeader\` in ${adapter.optionsName}: did you mean \`standardHeaders\`?`,
        }),
      );
    });

    it('rejects a mode other than enforce or shadow, naming it', async () => {
      await expect(start({ mode: 'dry-run' })).rejects.toEqual(
        expect.objectContaining({ name: 'RangeError', code: 'ERR_RATEWARDEN_OUT_OF_RANGE', message: "Expected `mode` to be 'enforce', 'shadow' or undefined, got `\"dry-run\"` (string)" }),
      );
      await expect(start({ mode: true })).rejects.toEqual(expect.objectContaining({ name: 'TypeError', code: 'ERR_RATEWARDEN_INVALID_TYPE' }));
    });
  });
});
