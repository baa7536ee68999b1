// ratewarden/hono in a real Hono app served by @hono/node-server on 127.0.0.1 (and on ::1 for the
// IPv6 default key), with real requests (global fetch) and an injected clock: no wall clock, no
// sleeps. What is Hono's own is tested here: the context variable, per-path `app.use`, headers
// added after `next()`, what `onRejected` may return that is Hono's (a `Response`; headers set
// earlier with `c.header()`), the default key read from `c.env`, `app.onError` and `c.error`, and
// the options only Hono has. What every adapter does (headers, the 429 and the 503, costs,
// groups, skip, shadow mode, onError, onRejected's bodies, counting only failures or successes)
// is the HTTP contract's (contract/contract.test.ts, which serves Hono too).
//
// The default key on Bun, Deno and Cloudflare Workers is tested here through `app.request()` with
// the runtime's globals and `c.env` as that runtime sets them (these tests run in Node.js); the
// real runtimes serve a Hono app in test/runtimes/.
//
// Why one file of about 470 lines: one feature, the Hono integration's own behaviour (one test
// file per feature); what it shares with the other adapters already lives in the contract suite.
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { Hono, type Context } from 'hono';
import { afterAll, afterEach, beforeAll, describe, expect, expectTypeOf, it, vi } from 'vitest';
import { RateLimitGroup, RateLimiter, RateWardenRangeError, RateWardenTypeError, type RateLimitResult, type RateLimitStore } from '../../../src/index.js';
import { honoRateLimit, type HonoRateLimitOptions, type RateLimitVariables } from '../../../src/middleware/hono.js';

let now = 0;
const clock = (): number => now;
const limiter = (threshold = 2, windowSeconds = 60): RateLimiter => new RateLimiter({ threshold, windowSeconds, clock });
const apiKey = (c: Context): string => c.req.header('x-api-key') ?? 'anonymous';

/** A store that is down: every decision rejects. */
const failing: RateLimitStore = {
  name: 'failing',
  consume: () => Promise.reject(new Error('store down')),
  peek: () => Promise.reject(new Error('store down')),
};

/** The keys a limiter decided, in order. */
function keysOf(decided: RateLimiter): string[] {
  const keys: string[] = [];
  decided.on('decision', (key) => keys.push(key));
  return keys;
}

interface AppEnv {
  Variables: RateLimitVariables & { limit: RateLimitResult | undefined };
}

/** Handler invocations, by path. */
const calls = new Map<string, number>();
/** What Hono's `app.onError` received. */
const errors: Error[] = [];

/**
 * An app with the error handler every test app shares: records the error and answers 500 with
 * its name and message (200 for an error whose message is `soft`: an error answered as a success).
 */
function newApp(): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.onError((error, c) => {
    errors.push(error);
    return c.json({ name: error.name, message: error.message }, error.message === 'soft' ? 200 : 500);
  });
  return app;
}

/** Answers with the decision the middleware put in the context variable. */
function decisionHandler(c: Context<AppEnv>): Response {
  calls.set(c.req.path, (calls.get(c.req.path) ?? 0) + 1);
  const decision = c.get('rateLimit');
  expectTypeOf(decision).toEqualTypeOf<RateLimitResult | undefined>();
  return c.json({ decision: decision ?? null });
}

const limiters = {
  api: limiter(2),
  basic: limiter(2),
  shadow: limiter(1),
  login: limiter(3),
  soft: limiter(3),
  softCustom: limiter(3),
  v6: limiter(5),
  v6Wide: limiter(5),
  v6Exact: limiter(5),
};
const apiKeys = keysOf(limiters.api);

const app = newApp();
// Per path: /api/* is limited (the default key: the client address), /other is not.
app.use('/api/*', honoRateLimit({ limiter: limiters.api }));
app.get('/api/x', decisionHandler);
app.get('/api/y', decisionHandler);
app.get('/other', decisionHandler);

app.use('/basic', honoRateLimit({ limiter: limiters.basic, key: apiKey }));
app.get('/basic', decisionHandler);

// The handler's own headers are kept; immutable ones are copied.
app.use('/own/*', honoRateLimit({ limiter: limiter(5), key: apiKey }));
app.get('/own/header', (c) => {
  c.header('RateLimit', '"mine";r=7;t=1');
  return c.text('ok');
});
app.get('/own/response', () => new Response('ok', { headers: { 'RateLimit-Policy': '"mine";q=9;w=1' } }));
app.get('/own/immutable', () => Response.redirect('http://127.0.0.1/elsewhere', 302));

// onRejected: a Response, nothing, or an error; after a middleware that sets a header of its own.
app.use('/rejected/*', async (c, next) => {
  c.header('X-Earlier', 'kept');
  await next();
});
const rejected = (onRejected?: HonoRateLimitOptions['onRejected']) =>
  honoRateLimit(onRejected === undefined ? { limiter: limiter(1), key: apiKey } : { limiter: limiter(1), key: apiKey, onRejected });
app.get(
  '/rejected/response',
  rejected((c, result) => c.json({ busy: true, seen: c.get('rateLimit') === result }, 503, { 'Retry-After': '5' })),
  decisionHandler,
);
app.get('/rejected/empty', rejected(() => undefined), decisionHandler);
app.get(
  '/rejected/throws',
  rejected(() => {
    throw new Error('onRejected failed');
  }),
  decisionHandler,
);
app.get('/rejected/default', rejected(), decisionHandler);

const group = new RateLimitGroup([
  { limiter: limiter(2, 60), name: 'burst' },
  { limiter: limiter(5, 3600), name: 'hourly' },
]);
app.get('/group', honoRateLimit({ limiter: group, key: apiKey }), decisionHandler);
app.get('/skip', honoRateLimit({ limiter: limiter(1), key: apiKey, skip: (c) => c.req.header('x-internal') === 'yes' }), decisionHandler);
app.get('/shadow', honoRateLimit({ limiter: limiters.shadow, key: apiKey, mode: 'shadow' }), decisionHandler);
app.get(
  '/variable',
  honoRateLimit({ limiter: limiter(1), key: apiKey, variable: 'limit' }),
  (c) => c.json({ limit: c.get('limit'), rateLimit: c.get('rateLimit') ?? null }),
);

const broken = new RateLimiter({ threshold: 2, windowSeconds: 60, clock, strategy: failing });
app.get('/error', honoRateLimit({ limiter: broken, key: apiKey }), decisionHandler);
app.get('/error-allow', honoRateLimit({ limiter: broken, key: apiKey, onError: () => 'allow' }), decisionHandler);
app.get('/bad-key', honoRateLimit({ limiter: limiter(), key: () => '' }), decisionHandler);

// Counting only failures, with errors thrown by the handler (answered by app.onError: a 500, or a
// 200 for `soft`).
const outcome = (c: Context<AppEnv>): Response => {
  const wanted = c.req.query('outcome');
  if (wanted === 'throw') throw new Error('handler failed');
  if (wanted === 'soft') throw new Error('soft');
  return c.text(wanted ?? 'ok', wanted === 'fail' ? 401 : 200);
};
app.get('/login', honoRateLimit({ limiter: limiters.login, key: apiKey, skipSuccessfulRequests: true }), outcome);
app.get('/soft', honoRateLimit({ limiter: limiters.soft, key: apiKey, skipSuccessfulRequests: true }), outcome);
app.get(
  '/soft-custom',
  honoRateLimit({ limiter: limiters.softCustom, key: apiKey, skipSuccessfulRequests: true, requestWasSuccessful: (c) => c.res.status < 400 }),
  outcome,
);

// The IPv6 default key, served on ::1.
const v6Keys = { default: keysOf(limiters.v6), wide: keysOf(limiters.v6Wide), exact: keysOf(limiters.v6Exact) };
app.get('/v6/default', honoRateLimit({ limiter: limiters.v6 }), decisionHandler);
app.get('/v6/wide', honoRateLimit({ limiter: limiters.v6Wide, ipv6Subnet: 48 }), decisionHandler);
app.get('/v6/exact', honoRateLimit({ limiter: limiters.v6Exact, ipv6Subnet: false }), decisionHandler);

/** Serves `app` with @hono/node-server on `hostname`, port 0. */
async function listen(hostname: string): Promise<{ server: ServerType; base: string }> {
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch, port: 0, hostname }, (info: AddressInfo) => {
      resolve({ server, base: `http://${info.family === 'IPv6' ? `[${info.address}]` : info.address}:${info.port}` });
    });
    server.once('error', reject);
  });
}

let v4: { server: ServerType; base: string };
let v6: { server: ServerType; base: string };

beforeAll(async () => {
  v4 = await listen('127.0.0.1');
  v6 = await listen('::1');
});

afterAll(async () => {
  for (const { server } of [v4, v6]) {
    await new Promise((resolve) => server.close(resolve));
  }
});

const get = (path: string, headers: Record<string, string> = {}, base = v4.base): Promise<Response> =>
  fetch(`${base}${path}`, { headers, redirect: 'manual' });
const decisionOf = async (response: Response): Promise<RateLimitResult | null> =>
  ((await response.json()) as { decision: RateLimitResult | null }).decision;

describe('honoRateLimit in a Hono app served by @hono/node-server', () => {
  it("limits the paths of app.use('/api/*') only, by the client address: two requests from 127.0.0.1 share one limit", async () => {
    now = 0;
    const first = await get('/api/x');
    expect(first.status).toBe(200);
    expect(first.headers.get('ratelimit')).toBe('"default";r=1;t=60');
    const second = await get('/api/y');
    expect(second.status).toBe(200);
    expect(second.headers.get('ratelimit')).toBe('"default";r=0;t=60');
    const third = await get('/api/x', { 'X-Forwarded-For': '203.0.113.9' });
    expect(third.status).toBe(429);
    expect(apiKeys).toEqual(['127.0.0.1', '127.0.0.1', '127.0.0.1']);
    expect(calls.get('/api/x')).toBe(1);

    const other = await get('/other');
    expect(other.status).toBe(200);
    expect(other.headers.get('ratelimit')).toBeNull();
    expect(await decisionOf(other)).toBeNull();
  });

  it("puts the decision in the context variable: c.get('rateLimit'), typed by RateLimitVariables; a group's result, a shadow refusal", async () => {
    now = 0;
    // Typed as what it holds: unset (undefined) where the middleware decided nothing (as c.get's
    // type in decisionHandler).
    expectTypeOf<RateLimitVariables['rateLimit']>().toEqualTypeOf<RateLimitResult | undefined>();
    // The middleware's own type carries the variable: a route after it reads it typed, in an app
    // that declares no Variables.
    new Hono().get('/typed', honoRateLimit({ limiter: limiter(), key: apiKey }), (c) => {
      expectTypeOf(c.get('rateLimit')).toEqualTypeOf<RateLimitResult | undefined>();
      return c.text('typed');
    });
    const decision = await decisionOf(await get('/basic', { 'x-api-key': 'variable' }));
    expect(decision).toEqual({ allowed: true, remaining: 1, retryAfter: 0, limit: 2, resetAfter: 60 });
    // A custom name, and the default one left alone.
    const named = (await (await get('/variable')).json()) as { limit: RateLimitResult; rateLimit: unknown };
    expect(named).toEqual({ limit: { allowed: true, remaining: 0, retryAfter: 0, limit: 1, resetAfter: 60 }, rateLimit: null });
    // A group's result, with its members.
    expect(await decisionOf(await get('/group'))).toMatchObject({ allowed: true, names: ['burst', 'hourly'], binding: 0, results: [{ remaining: 1 }, { remaining: 4 }] });
    // In shadow mode, the refusal that was not enforced.
    expect(await decisionOf(await get('/shadow'))).toMatchObject({ allowed: true, remaining: 0 });
    const shadowed = await get('/shadow');
    expect(shadowed.status).toBe(200);
    expect(await decisionOf(shadowed)).toMatchObject({ allowed: false, remaining: 0, retryAfter: 60 });
  });

  it('sets no variable on a request it did not decide: skipped, or let through by onError', async () => {
    now = 0;
    const skipped = await get('/skip', { 'x-internal': 'yes' });
    expect(skipped.status).toBe(200);
    expect(await decisionOf(skipped)).toBeNull();
    expect(await decisionOf(await get('/skip'))).toMatchObject({ allowed: true });
    const open = await get('/error-allow');
    expect(open.status).toBe(200);
    expect(await decisionOf(open)).toBeNull();
  });

  it("adds the headers after the handler, where it did not set them: its own win; immutable headers are copied", async () => {
    now = 0;
    const header = await get('/own/header');
    expect(header.headers.get('ratelimit')).toBe('"mine";r=7;t=1');
    expect(header.headers.get('ratelimit-policy')).toBe('"default";q=5;w=60');
    const response = await get('/own/response');
    expect(response.headers.get('ratelimit-policy')).toBe('"mine";q=9;w=1');
    expect(response.headers.get('ratelimit')).toBe('"default";r=3;t=60');
    const immutable = await get('/own/immutable');
    expect(immutable.status).toBe(302);
    expect(immutable.headers.get('location')).toBe('http://127.0.0.1/elsewhere');
    expect(immutable.headers.get('ratelimit')).toBe('"default";r=2;t=60');
  });

  it('sends what onRejected returns: its Response (the variable already set), or an empty 429; headers set earlier are kept; an error goes to app.onError', async () => {
    now = 0;
    const refuse = async (path: string): Promise<Response> => {
      expect((await get(path)).status).toBe(200);
      return get(path);
    };
    const own = await refuse('/rejected/response');
    expect(own.status).toBe(503);
    expect(await own.json()).toEqual({ busy: true, seen: true });
    expect(own.headers.get('retry-after')).toBe('5'); // its own
    expect(own.headers.get('ratelimit')).toBe('"default";r=0;t=60'); // the missing ones added
    expect(own.headers.get('x-earlier')).toBe('kept');

    const empty = await refuse('/rejected/empty');
    expect(empty.status).toBe(429);
    expect(empty.headers.get('content-type')).toBeNull();
    expect(empty.headers.get('retry-after')).toBe('60');
    expect(empty.headers.get('x-earlier')).toBe('kept');
    expect(await empty.text()).toBe('');

    const problem = await refuse('/rejected/default');
    expect(problem.headers.get('content-type')).toBe('application/problem+json');
    expect(problem.headers.get('x-earlier')).toBe('kept');

    errors.length = 0;
    const thrown = await refuse('/rejected/throws');
    expect(thrown.status).toBe(500);
    expect(await thrown.json()).toEqual({ name: 'Error', message: 'onRejected failed' });
    expect(errors).toHaveLength(1);
    for (const path of ['/rejected/response', '/rejected/empty', '/rejected/throws']) {
      expect(calls.get(path)).toBe(1);
    }
  });

  it("a limiter error goes to the app's own app.onError as it was thrown, the handler not called", async () => {
    errors.length = 0;
    const failed = await get('/error');
    expect(failed.status).toBe(500);
    expect(await failed.json()).toEqual({ name: 'Error', message: 'store down' });
    expect(errors).toHaveLength(1);
    expect(calls.get('/error')).toBeUndefined();

    const badKey = await get('/bad-key');
    expect(badKey.status).toBe(500);
    // An invalid key is the limiter's error, through the same path.
    expect(errors[1]).toBeInstanceOf(RateWardenRangeError);
    expect(errors[1]?.message).toMatch(/^Expected `user` to be /);
  });
});

describe('counting only failures, with errors Hono answers', () => {
  const remaining = (of: RateLimiter, key: string): number => of.peekSync(key).remaining;

  it("skipSuccessfulRequests: a handler that threw counts, and the app's app.onError response carries the headers (the state after the decision)", async () => {
    now = 0;
    const key = { 'x-api-key': 'login' };
    const thrown = await get('/login?outcome=throw', key);
    expect(thrown.status).toBe(500);
    expect(await thrown.json()).toEqual({ name: 'Error', message: 'handler failed' });
    expect(thrown.headers.get('ratelimit')).toBe('"default";r=2;t=60');
    expect(remaining(limiters.login, 'login')).toBe(2);
  });

  it('by default an error answered with a 200 by app.onError still failed (c.error); requestWasSuccessful(c, c) may judge otherwise', async () => {
    now = 0;
    const key = { 'x-api-key': 'soft' };
    expect((await get('/soft?outcome=soft', key)).status).toBe(200);
    expect(remaining(limiters.soft, 'soft')).toBe(2);
    expect((await get('/soft-custom?outcome=soft', key)).status).toBe(200);
    expect(remaining(limiters.softCustom, 'soft')).toBe(3);
    expect((await get('/soft-custom?outcome=fail', key)).status).toBe(401);
    expect(remaining(limiters.softCustom, 'soft')).toBe(2);
  });
});

describe('the default key: the client address, where the runtime gives one', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  it('IPv6 (a server on ::1): the /64 network by default, ipv6Subnet 48, or the address itself with false', async () => {
    now = 0;
    expect((await get('/v6/default', {}, v6.base)).headers.get('ratelimit')).toBe('"default";r=4;t=60');
    expect((await get('/v6/default', {}, v6.base)).headers.get('ratelimit')).toBe('"default";r=3;t=60');
    await get('/v6/wide', {}, v6.base);
    await get('/v6/exact', {}, v6.base);
    expect(v6Keys).toEqual({ default: ['::/64', '::/64'], wide: ['::/48'], exact: ['::1'] });
  });

  it('where there is no address (app.request() with no env), each request fails naming `key`, through the error path', async () => {
    errors.length = 0;
    const response = await app.request('/api/x');
    expect(response.status).toBe(500);
    expect(errors).toHaveLength(1);
    const [error] = errors;
    expect(error).toBeInstanceOf(RateWardenTypeError);
    expect(error?.message).toMatch(/^Expected `key` to be a function \(pass `key`: no trustworthy client address on this runtime; .*\), got `undefined` \(undefined\)$/);

    // onError sees it too, and may let the request through.
    const seen: unknown[] = [];
    const lenient = newApp();
    lenient.get('/', honoRateLimit({ limiter: limiter(), onError: (_c, caught) => ((seen.push(caught), 'allow')) }), (c) => c.text('through'));
    const allowed = await lenient.request('/');
    expect(await allowed.text()).toBe('through');
    expect(seen[0]).toBeInstanceOf(RateWardenTypeError);
    expect(allowed.headers.get('ratelimit')).toBeNull();
  });

  /** The key `honoRateLimit` with the default key decides for one `app.request(…, env)`, or the error it took. */
  async function keyFor(env: unknown, headers: Record<string, string> = {}): Promise<string | Error> {
    const decided = new RateLimiter({ threshold: 5, windowSeconds: 60, clock });
    const keys = keysOf(decided);
    const probe = newApp();
    probe.get('/', honoRateLimit({ limiter: decided }), (c) => c.text('ok'));
    errors.length = 0;
    await probe.request('/', { headers }, env);
    return errors[0] ?? (keys[0] as string);
  }

  it('Node.js: a closed connection (no remoteAddress) fails naming its source', async () => {
    expect(await keyFor({ incoming: { socket: { remoteAddress: '2001:db8:1:2::5' } } })).toBe('2001:db8:1:2::/64');
    expect(await keyFor({ server: { incoming: { socket: { remoteAddress: '::ffff:198.51.100.7' } } } })).toBe('198.51.100.7');
    const closed = await keyFor({ incoming: { socket: {} } });
    expect(closed).toBeInstanceOf(RateWardenTypeError);
    expect((closed as Error).message).toMatch(/^Expected `c\.env\.incoming\.socket\.remoteAddress` to be a client IP address \(the default `key`; .*\), got `undefined` \(undefined\)$/);
  });

  it('Bun: server.requestIP(c.req.raw), only where Bun runs', async () => {
    const requested: unknown[] = [];
    const server = {
      requestIP: (request: Request) => {
        requested.push(request);
        return { address: '2001:db8:1:2::9', family: 'IPv6', port: 1234 };
      },
    };
    // Not in Bun: an env that merely looks like Bun's server is not trusted.
    expect(await keyFor(server)).toBeInstanceOf(RateWardenTypeError);
    vi.stubGlobal('Bun', {});
    expect(await keyFor(server)).toBe('2001:db8:1:2::/64');
    expect(requested[0]).toBeInstanceOf(Request);
    expect(await keyFor({ server })).toBe('2001:db8:1:2::/64');
    const unix = await keyFor({ requestIP: () => null });
    expect((unix as Error).message).toMatch(/^Expected `server\.requestIP\(c\.req\.raw\)` to be a client IP address/);
  });

  it('Deno: c.env.remoteAddr.hostname of Deno.serve, only where Deno runs', async () => {
    const info = { remoteAddr: { transport: 'tcp', hostname: '198.51.100.8', port: 1234 }, completed: Promise.resolve() };
    expect(await keyFor(info)).toBeInstanceOf(RateWardenTypeError);
    vi.stubGlobal('Deno', {});
    expect(await keyFor(info)).toBe('198.51.100.8');
    const unix = await keyFor({ remoteAddr: { transport: 'unix', path: '/tmp/socket' } });
    expect((unix as Error).message).toMatch(/^Expected `c\.env\.remoteAddr\.hostname` to be a client IP address/);
  });

  it('Cloudflare Workers: CF-Connecting-IP, only where navigator.userAgent is Cloudflare-Workers', async () => {
    const headers = { 'CF-Connecting-IP': '2001:db8:1:2::7' };
    expect(await keyFor({}, headers)).toBeInstanceOf(RateWardenTypeError);
    vi.stubGlobal('navigator', { userAgent: 'Cloudflare-Workers' });
    expect(await keyFor({ KV: {} }, headers)).toBe('2001:db8:1:2::/64');
    const missing = await keyFor({});
    expect((missing as Error).message).toMatch(/^Expected `CF-Connecting-IP` to be the client address Cloudflare's edge sets .*got `undefined` \(undefined\)$/);
  });
});

describe('honoRateLimit options', () => {
  const bad = (options: unknown) => () => honoRateLimit(options as HonoRateLimitOptions);

  it('rejects an unknown option, naming the one meant', () => {
    expect(bad({ limiter: limiter(), varible: 'x' })).toThrow(
      expect.objectContaining({
        name: 'TypeError',
        code: 'ERR_RATEWARDEN_UNKNOWN_OPTION',
        message: 'Unknown option `varible` in honoRateLimit options: did you mean `variable`?',
      }),
    );
    // hono-rate-limiter's names are not ours.
    expect(bad({ limiter: limiter(), keyGenerator: apiKey })).toThrow(/^Unknown option `keyGenerator` in honoRateLimit options: expected one of /);
  });

  it('validates the rest at construction', () => {
    expect(bad({ limiter: limiter(), variable: '' })).toThrow(RateWardenRangeError);
    expect(bad({ limiter: limiter(), variable: 5 })).toThrow('Expected `variable` to be a non-empty string or undefined, got `5` (number)');
    expect(bad({ limiter: limiter(), onRejected: 'busy' })).toThrow('Expected `onRejected` to be a function or undefined, got `"busy"` (string)');
    expect(bad({ limiter: limiter(), key: apiKey, ipv6Subnet: 48 })).toThrow(/^Expected `ipv6Subnet` to be undefined when `key` is given/);
    expect(bad({ limiter: limiter(), ipv6Subnet: 0 })).toThrow(RateWardenRangeError);
    expect(bad({ key: apiKey })).toThrow('Expected `limiter` to be a RateLimiter or a RateLimitGroup, got `undefined` (undefined)');
  });
});

describe('the built ratewarden/hono', () => {
  // What it exports, in both formats, and what it imports: test/unit/dist.test.ts.
  it('decides in a Hono app, with the core it shares', async () => {
    const name: string = 'ratewarden/hono';
    const coreName: string = 'ratewarden';
    const built = (await import(name)) as typeof import('../../../src/middleware/hono.js');
    const core = (await import(coreName)) as typeof import('../../../src/index.js');
    const hono = new Hono<AppEnv>();
    hono.get('/', built.honoRateLimit({ limiter: new core.RateLimiter({ threshold: 1, windowSeconds: 60, clock }), key: () => 'k' }), (c) =>
      c.json(c.get('rateLimit')),
    );
    const allowed = await hono.request('/');
    expect(await allowed.json()).toEqual({ allowed: true, remaining: 0, retryAfter: 0, limit: 1, resetAfter: 60 });
    expect(allowed.headers.get('ratelimit')).toBe('"default";r=0;t=60');
    const refused = await hono.request('/');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('content-type')).toBe('application/problem+json');
  });
});
