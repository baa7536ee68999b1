// ratewarden/fetch served by a real HTTP server on 127.0.0.1 (test/support/http-server.ts's
// serveFetch: IncomingMessage → Request, Response → ServerResponse), with real requests (global
// fetch) and an injected clock: no wall clock, no sleeps.
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RateLimiter } from '../../../src/index.js';
import { checkRateLimit, withRateLimit, type FetchRateLimitOptions } from '../../../src/middleware/fetch.js';
import { exactly } from '../../support/errors.js';
import { serveFetch } from '../../support/http-server.js';
import { storeDown } from '../../support/stores.js';

/** The clock: it never moves (nothing here waits for a window). */
const clock = (): number => 0;
const limiter = (threshold = 2, windowSeconds = 60): RateLimiter =>
  new RateLimiter({ threshold, windowSeconds, clock });
const apiKey = (request: Request): string => request.headers.get('x-api-key') ?? 'anonymous';

/** Handler invocations, by path. */
const calls = new Map<string, number>();
const handler = (request: Request): Response => {
  const path = new URL(request.url).pathname;
  calls.set(path, (calls.get(path) ?? 0) + 1);
  return Response.json({ ok: true });
};

const routes = new Map<string, (request: Request) => Promise<Response>>();
let stop: () => Promise<void>;
let base: string;

beforeAll(async () => {
  routes.set(
    '/custom-response',
    withRateLimit(handler, {
      limiter: limiter(1),
      key: apiKey,
      onRejected: () => new Response('busy', { status: 503, headers: { 'Content-Type': 'text/plain', 'Retry-After': '5' } }),
    }),
  );
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
  ({ origin: base, stop } = await serveFetch(async (request) => {
    const route = routes.get(new URL(request.url).pathname);
    return route === undefined ? new Response('not found', { status: 404 }) : route(request);
  }));
});

afterAll(async () => {
  await stop();
});

const get = (path: string, headers: Record<string, string> = {}): Promise<Response> =>
  fetch(`${base}${path}`, { headers, redirect: 'manual' });

// What every integration does (headers, the 429, keys, costs, groups, skip, onRejected, onError,
// shadow mode, blocks, counting only failures) is checked for withRateLimit by the HTTP contract
// (contract/contract.test.ts); here, what is the Fetch API's own.
describe('withRateLimit (a Fetch handler behind a real HTTP server)', () => {
  it("keeps the header fields of onRejected's own Response, and adds the missing rate-limit ones", async () => {
    await get('/custom-response');
    const own = await get('/custom-response');
    expect(own.status).toBe(503);
    expect(await own.text()).toBe('busy');
    expect(own.headers.get('retry-after')).toBe('5'); // its own header wins
    expect(own.headers.get('ratelimit')).toBe('"default";r=0;t=60'); // the missing ones are added
    expect(calls.get('/custom-response')).toBe(1);
  });

  it('adds the headers to a response with immutable headers by copying it', async () => {
    const redirect = await get('/redirect');
    expect(redirect.status).toBe(302);
    expect(redirect.headers.get('location')).toBe('http://127.0.0.1/elsewhere');
    expect(redirect.headers.get('ratelimit')).toBe('"default";r=1;t=60');
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
    const broken = new RateLimiter({ threshold: 1, windowSeconds: 1, clock, strategy: storeDown });
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
