// ratewarden/fetch served by a real HTTP server on 127.0.0.1 (a tiny node:http adapter:
// IncomingMessage → Request, Response → ServerResponse), with real requests (global fetch) and an
// injected clock: no wall clock, no sleeps.
import { createRequire } from 'node:module';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RateLimitGroup, RateLimiter, type RateLimitStore } from '../../../src/index.js';
import { checkRateLimit, withRateLimit, type FetchRateLimitOptions } from '../../../src/middleware/fetch.js';

/** The library's error: its class name, stable code and exact message. */
const exactly = (type: typeof TypeError | typeof RangeError, message: string): unknown =>
  expect.objectContaining({
    name: type.name,
    code: type === TypeError ? 'ERR_RATEWARDEN_INVALID_TYPE' : 'ERR_RATEWARDEN_OUT_OF_RANGE',
    message,
  });

let now = 0;
const clock = (): number => now;
const limiter = (threshold = 2, windowSeconds = 60): RateLimiter =>
  new RateLimiter({ threshold, windowSeconds, clock });
const apiKey = (request: Request): string => request.headers.get('x-api-key') ?? 'anonymous';

/** A store that is down: every decision rejects. */
const failing: RateLimitStore = {
  name: 'failing',
  consume: () => Promise.reject(new Error('store down')),
  peek: () => Promise.reject(new Error('store down')),
};

/** Handler invocations, by path. */
const calls = new Map<string, number>();
const handler = (request: Request): Response => {
  const path = new URL(request.url).pathname;
  calls.set(path, (calls.get(path) ?? 0) + 1);
  return Response.json({ ok: true });
};
/** What the wrapped handlers rejected with (the adapter answers 500, as a runtime would). */
const rejections: unknown[] = [];

const routes = new Map<string, (request: Request) => Promise<Response>>();

/** IncomingMessage → Request (GET/HEAD: no body), then Response → ServerResponse. */
async function adapt(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else if (value !== undefined) headers.set(name, value);
  }
  const request = new Request(`http://${req.headers.host ?? '127.0.0.1'}${req.url ?? '/'}`, { method: req.method ?? 'GET', headers });
  const route = routes.get(new URL(request.url).pathname);
  let response: Response;
  try {
    response = route === undefined ? new Response('not found', { status: 404 }) : await route(request);
  } catch (error) {
    rejections.push(error);
    response = new Response('internal error', { status: 500 });
  }
  const body = new Uint8Array(await response.arrayBuffer());
  const out: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    out[name] = value;
  });
  res.writeHead(response.status, out);
  res.end(body);
}

let server: Server;
let base: string;

beforeAll(async () => {
  const wrap = (path: string, options: FetchRateLimitOptions) => routes.set(path, withRateLimit(handler, options));
  wrap('/basic', { limiter: limiter(), key: apiKey });
  wrap('/skip', { limiter: limiter(1), key: apiKey, skip: (request) => request.headers.get('x-internal') === 'yes' });
  wrap('/api-key', { limiter: limiter(1), key: apiKey });
  wrap('/async-key', {
    limiter: limiter(1),
    key: async (request) => ({ id: `user:${await Promise.resolve(request.headers.get('x-user'))}` }),
  });
  wrap('/custom-body', { limiter: limiter(1), key: apiKey, onRejected: (_request, result) => ({ error: 'slow down', wait: result.retryAfter }) });
  wrap('/custom-response', {
    limiter: limiter(1),
    key: apiKey,
    onRejected: () => new Response('busy', { status: 503, headers: { 'Content-Type': 'text/plain', 'Retry-After': '5' } }),
  });
  wrap('/legacy', { limiter: limiter(), key: apiKey, legacyHeaders: true });
  const group = new RateLimitGroup([
    { limiter: limiter(2, 60), name: 'burst' },
    { limiter: limiter(5, 3600), name: 'hourly' },
  ]);
  wrap('/group', { limiter: group, key: apiKey, policy: [{ windowSeconds: 60 }, { windowSeconds: 3600 }] });
  const broken = new RateLimiter({ threshold: 2, windowSeconds: 60, clock, strategy: failing });
  wrap('/error', { limiter: broken, key: apiKey });
  wrap('/error-allow', { limiter: broken, key: apiKey, onError: () => 'allow' });
  // A handler whose response has immutable headers: the rate-limit headers go on a copy.
  routes.set(
    '/redirect',
    withRateLimit(() => Response.redirect('http://127.0.0.1/elsewhere', 302), { limiter: limiter(), key: apiKey }),
  );
  // The lower-level check, as a Hono or Next.js middleware would use it.
  const checked: FetchRateLimitOptions = { limiter: limiter(1), key: apiKey };
  routes.set('/check', async (request) => {
    const { result, headers, response } = await checkRateLimit(request, checked);
    if (response !== undefined) return response;
    const answer = handler(request);
    for (const [name, value] of Object.entries(headers)) answer.headers.set(name, value);
    answer.headers.set('x-remaining', String(result?.remaining));
    return answer;
  });

  server = createServer((req, res) => {
    void adapt(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const get = (path: string, headers: Record<string, string> = {}): Promise<Response> =>
  fetch(`${base}${path}`, { headers, redirect: 'manual' });

describe('withRateLimit (a Fetch handler behind a real HTTP server)', () => {
  it('allows up to the limit with RateLimit headers, then answers 429 with a problem body; the clock resets it', async () => {
    now = 0;
    const first = await get('/basic');
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ ok: true });
    expect(first.headers.get('ratelimit-policy')).toBe('"default";q=2;w=60');
    expect(first.headers.get('ratelimit')).toBe('"default";r=1;t=60');
    expect(first.headers.get('retry-after')).toBeNull();
    expect(first.headers.get('x-ratelimit-limit')).toBeNull();

    const second = await get('/basic');
    expect(second.status).toBe(200);
    expect(second.headers.get('ratelimit')).toBe('"default";r=0;t=60');

    now = 30_000;
    const third = await get('/basic');
    expect(third.status).toBe(429);
    expect(third.headers.get('content-type')).toBe('application/problem+json');
    expect(third.headers.get('ratelimit-policy')).toBe('"default";q=2;w=60');
    expect(third.headers.get('ratelimit')).toBe('"default";r=0;t=30');
    const retryAfter = third.headers.get('retry-after');
    expect(retryAfter).toMatch(/^[1-9]\d*$/);
    expect(Number(retryAfter)).toBe(30);
    expect(await third.json()).toEqual({
      type: 'about:blank',
      title: 'Too Many Requests',
      status: 429,
      detail: 'Rate limit of 2 exceeded; retry in 30 s.',
      retryAfter: 30,
    });
    expect(calls.get('/basic')).toBe(2); // the rejected request never reached the handler

    now = 60_000;
    const later = await get('/basic');
    expect(later.status).toBe(200);
    expect(later.headers.get('ratelimit')).toBe('"default";r=1;t=60');
    expect(calls.get('/basic')).toBe(3);
  });

  it('skips requests that `skip` lets through: no decision, no headers', async () => {
    expect((await get('/skip')).status).toBe(200);
    const skipped = await get('/skip', { 'x-internal': 'yes' });
    expect(skipped.status).toBe(200);
    expect(skipped.headers.get('ratelimit')).toBeNull();
    expect((await get('/skip')).status).toBe(429);
    expect((await get('/skip', { 'x-internal': 'yes' })).status).toBe(200);
    expect(calls.get('/skip')).toBe(3);
  });

  it('limits each key separately', async () => {
    expect((await get('/api-key', { 'x-api-key': 'alpha' })).status).toBe(200);
    expect((await get('/api-key', { 'x-api-key': 'beta' })).status).toBe(200);
    expect((await get('/api-key', { 'x-api-key': 'alpha' })).status).toBe(429);
    expect((await get('/api-key', { 'x-api-key': 'beta' })).status).toBe(429);
    expect(calls.get('/api-key')).toBe(2);
  });

  it('awaits an async key extractor', async () => {
    expect((await get('/async-key', { 'x-user': 'ann' })).status).toBe(200);
    expect((await get('/async-key', { 'x-user': 'bob' })).status).toBe(200);
    expect((await get('/async-key', { 'x-user': 'ann' })).status).toBe(429);
  });

  it('sends what a custom onRejected returns: a body as a 429, or its own Response', async () => {
    await get('/custom-body');
    const body = await get('/custom-body');
    expect(body.status).toBe(429);
    expect(body.headers.get('content-type')).toBe('application/json');
    expect(body.headers.get('retry-after')).toBe('60');
    expect(await body.json()).toEqual({ error: 'slow down', wait: 60 });
    expect(calls.get('/custom-body')).toBe(1);

    await get('/custom-response');
    const own = await get('/custom-response');
    expect(own.status).toBe(503);
    expect(await own.text()).toBe('busy');
    expect(own.headers.get('retry-after')).toBe('5'); // its own header wins
    expect(own.headers.get('ratelimit')).toBe('"default";r=0;t=60'); // the missing ones are added
    expect(calls.get('/custom-response')).toBe(1);
  });

  it('sends the legacy X-RateLimit-* headers when asked', async () => {
    const legacy = await get('/legacy');
    expect(legacy.headers.get('x-ratelimit-limit')).toBe('2');
    expect(legacy.headers.get('x-ratelimit-remaining')).toBe('1');
    expect(legacy.headers.get('x-ratelimit-reset')).toBe('60');
    expect(legacy.headers.get('ratelimit')).toBe('"default";r=1;t=60');
  });

  it('lists every policy of a group', async () => {
    const first = await get('/group');
    expect(first.headers.get('ratelimit-policy')).toBe('"burst";q=2;w=60, "hourly";q=5;w=3600');
    expect(first.headers.get('ratelimit')).toBe('"burst";r=1;t=60, "hourly";r=4;t=3600');
    await get('/group');
    const rejected = await get('/group');
    expect(rejected.status).toBe(429);
    expect(rejected.headers.get('ratelimit')).toBe('"burst";r=0;t=60, "hourly";r=3;t=3600');
    expect(rejected.headers.get('retry-after')).toBe('60');
    expect(calls.get('/group')).toBe(2);
  });

  it('adds the headers to a response with immutable headers by copying it', async () => {
    const redirect = await get('/redirect');
    expect(redirect.status).toBe(302);
    expect(redirect.headers.get('location')).toBe('http://127.0.0.1/elsewhere');
    expect(redirect.headers.get('ratelimit')).toBe('"default";r=1;t=60');
  });

  it('rejects with a limiter error (the runtime answers it: a 500 here), without calling the handler', async () => {
    const failed = await get('/error');
    expect(failed.status).toBe(500);
    expect(rejections).toHaveLength(1);
    expect(rejections[0]).toMatchObject({ message: 'store down' });
    expect(calls.get('/error')).toBeUndefined();

    const open = await get('/error-allow');
    expect(open.status).toBe(200);
    expect(open.headers.get('ratelimit')).toBeNull();
    expect(calls.get('/error-allow')).toBe(1);
  });
});

describe('checkRateLimit', () => {
  it('returns the result, the headers and the 429 response', async () => {
    const first = await get('/check');
    expect(first.status).toBe(200);
    expect(first.headers.get('ratelimit')).toBe('"default";r=0;t=60');
    expect(first.headers.get('x-remaining')).toBe('0');
    const second = await get('/check');
    expect(second.status).toBe(429);
    expect(second.headers.get('content-type')).toBe('application/problem+json');
    expect(calls.get('/check')).toBe(1);
  });

  it('rejects for invalid options, and with the limiter error', async () => {
    const request = new Request('http://127.0.0.1/');
    await expect(checkRateLimit(request, { limiter: limiter() } as FetchRateLimitOptions)).rejects.toThrow(TypeError);
    const broken = new RateLimiter({ threshold: 1, windowSeconds: 1, clock, strategy: failing });
    await expect(checkRateLimit(request, { limiter: broken, key: () => 'k' })).rejects.toThrow('store down');
    const skipped = await checkRateLimit(request, { limiter: broken, key: () => 'k', skip: async () => true });
    expect(skipped).toEqual({ result: undefined, headers: {}, response: undefined, settle: expect.any(Function) });
  });
});

describe('withRateLimit options', () => {
  it('requires `key` (a Fetch Request has no client address) and validates the rest', () => {
    const bad = (options: unknown, wrapped: unknown = handler) => () =>
      withRateLimit(wrapped as typeof handler, options as FetchRateLimitOptions);
    expect(bad({ limiter: limiter() })).toThrow(TypeError);
    expect(bad({ limiter: limiter() })).toThrow(/^Expected `key` to be a function \(a Fetch Request carries no client address.*got `undefined` \(undefined\)$/);
    expect(bad({ limiter: limiter(), key: 5 })).toThrow(exactly(TypeError, 'Expected `key` to be a function, got `5` (number)'));
    expect(bad({ key: apiKey })).toThrow(exactly(TypeError, 'Expected `limiter` to be a RateLimiter or a RateLimitGroup, got `undefined` (undefined)'));
    expect(bad({ limiter: limiter(), key: apiKey }, 'handler')).toThrow(exactly(TypeError, 'Expected `handler` to be a function, got `"handler"` (string)'));
    expect(bad({ limiter: limiter(), key: apiKey, standardHeaders: 'yes' })).toThrow(TypeError);
    expect(bad({ limiter: limiter(), key: apiKey, policy: { windowSeconds: Infinity } })).toThrow(RangeError);
    expect(bad({ limiter: limiter(), key: apiKey, policy: [{ windowSeconds: 1 }, { windowSeconds: 2 }] })).toThrow(RangeError);
  });
});

describe('the built ratewarden/fetch', () => {
  it('resolves through the exports map in both formats, free of Node built-ins', async () => {
    const name: string = 'ratewarden/fetch';
    const esm = (await import(name)) as Record<string, unknown>;
    expect(Object.keys(esm).sort()).toEqual(['HeaderNames', 'PROBLEM_CONTENT_TYPE', 'checkRateLimit', 'ipKey', 'withRateLimit']);
    const require = createRequire(import.meta.url);
    expect(require.resolve(name)).toMatch(/dist[\\/]fetch\.cjs$/);
    expect(typeof (require(name) as Record<string, unknown>).withRateLimit).toBe('function');
    const { readFileSync } = await import('node:fs');
    for (const file of ['fetch.js', 'fetch.cjs', 'express.js', 'fastify.js']) {
      const source = readFileSync(new URL(`../../../dist/${file}`, import.meta.url), 'utf8');
      const imported = [...source.matchAll(/(?:\bfrom\s*|\brequire\(\s*|\bimport\(\s*)["']([^"']+)["']/g)].map((m) => m[1]);
      expect(imported.every((specifier) => specifier?.startsWith('./')), `${file} imports ${imported.join(', ')}`).toBe(true);
    }
  });
});
