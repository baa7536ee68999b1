// Every options object of the public API rejects keys that are not among its options (issue 11,
// item 7: `new RateLimiter({ threshold: 1, windowSeconds: 1, maxkeys: 10 })` used to construct
// without the key bound the user meant). One table over every options object, a property over
// random unknown keys, and the rules of the shared check.
import fc from 'fast-check';
import { createClient } from 'redis';
import { describe, expect, it } from 'vitest';
import {
  ErrorCode,
  GCRA,
  RateLimitGroup,
  RateLimiter,
  RateWardenTypeError,
  createQuota,
  ipKey,
  rateLimitHeaders,
  rateLimitProblem,
  type RateLimitResult,
} from '../../src/index.js';
import { RedisGCRA, RedisSlidingWindowLog } from '../../src/redis/index.js';
import { expressRateLimit } from '../../src/middleware/express.js';
import { fastifyRateLimit } from '../../src/middleware/fastify.js';
import { checkRateLimit, withRateLimit } from '../../src/middleware/fetch.js';
import { honoRateLimit } from '../../src/middleware/hono.js';
import { RateWardenModule } from '../../src/nestjs/index.js';
import { compileOptions } from '../../src/nestjs/options.js';

type Extra = Record<string, unknown>;

interface Prepared {
  readonly run: () => unknown;
  readonly state?: () => unknown;
}

/** One options object of the public API. */
interface Case {
  /** How the message names the object. */
  readonly what: string;
  /** Its options: every key a call may carry. */
  readonly known: readonly string[];
  /**
   * Prepares a call of the API with valid options plus `extra` (a fresh limiter each time):
   * `run` makes it, throwing or returning a promise (or promises) that rejects on invalid
   * options; `state`, when there is any, snapshots what a rejected call must leave as it was.
   */
  readonly call: (extra: Extra) => Prepared;
  /** A misspelling, and the option it means. */
  readonly typo: readonly [string, string];
}

const fixedClock = () => 0;
const allowed: RateLimitResult = { allowed: true, remaining: 1, retryAfter: 0, limit: 2, resetAfter: 1 };
// Never connected: constructing a strategy sends nothing. (An 'error' listener, as the README
// asks: without one the strategies warn.)
const redis = createClient();
redis.on('error', () => {});

const LIMITER = ['threshold', 'windowSeconds', 'tier', 'blockSeconds', 'extendBlock', 'name', 'strategy', 'clock', 'limitFor', 'sweepIntervalSeconds', 'maxKeys'];
/** The quota's options (createQuota, a tier of limitFor, the first of RateLimiter's), and the names of createQuota. */
const QUOTA = ['threshold', 'windowSeconds', 'tier', 'blockSeconds', 'extendBlock'];
const REDIS = ['client', 'prefix', 'timeoutSeconds', 'onFailure', 'onError', 'time', 'batchSize', 'blockCacheSize'];
/** The counting options (skipSuccessfulRequests…), after the other shared ones. */
const COUNTING = ['skipSuccessfulRequests', 'skipFailedRequests', 'requestWasSuccessful'];
const MIDDLEWARE = ['limiter', 'key', 'skip', 'cost', 'policy', 'mode', 'standardHeaders', 'legacyHeaders', 'onError', ...COUNTING, 'onRejected'];
/** Express and Fastify also shape their default key (the client address) with `ipv6Subnet`. */
const ADDRESS_MIDDLEWARE = [...MIDDLEWARE, 'ipv6Subnet'];
/** Hono's also names its context variable. */
const HONO_MIDDLEWARE = [...ADDRESS_MIDDLEWARE, 'variable'];
/** RateWardenModule: named `limits` instead of `limiter`, and no `onRejected` (Nest's exception filters answer). */
const NEST_MODULE = ['limits', 'defaultLimits', 'key', 'skip', 'cost', 'policy', 'mode', 'standardHeaders', 'legacyHeaders', 'onError', ...COUNTING, 'ipv6Subnet'];

/** A limiter and a snapshot of everything a rejected call must leave unchanged. */
function limiterWithState(options: Extra = {}): { limiter: RateLimiter; state: () => unknown } {
  const limiter = new RateLimiter({ threshold: 2, windowSeconds: 1, clock: fixedClock, ...options });
  limiter.allowRequestSync('alice');
  return { limiter, state: () => ({ stats: limiter.stats(), alice: limiter.peekSync('alice'), carol: limiter.peekSync('carol') }) };
}

const cases: readonly Case[] = [
  {
    what: 'RateLimiter options',
    known: LIMITER,
    call: (extra) => ({ run: () => new RateLimiter({ threshold: 1, windowSeconds: 1, ...extra }) }),
    typo: ['maxkeys', 'maxKeys'],
  },
  {
    what: 'the quota returned by limitFor()',
    known: QUOTA,
    call: (extra) => {
      const tier = { threshold: 5, windowSeconds: 1, ...extra };
      const { limiter, state } = limiterWithState({ limitFor: (_user: unknown, key: string) => (key === 'bob' ? tier : undefined) });
      return { run: () => limiter.allowRequestSync('bob'), state };
    },
    typo: ['windowSecond', 'windowSeconds'],
  },
  {
    what: 'createQuota options',
    known: QUOTA,
    call: (extra) => ({ run: () => createQuota({ threshold: 1, windowSeconds: 1, ...extra }) }),
    typo: ['treshold', 'threshold'],
  },
  {
    what: 'createQuota names',
    known: QUOTA,
    call: (extra) => ({ run: () => createQuota({ threshold: 1, windowSeconds: 1 }, undefined, { threshold: 't', windowSeconds: 'w', ...extra }) }),
    typo: ['Threshold', 'threshold'],
  },
  {
    what: 'request options',
    known: ['cost', 'shadow'],
    call: (extra) => {
      const { limiter, state } = limiterWithState();
      return { run: () => limiter.allowRequestSync('bob', { cost: 1, ...extra }), state };
    },
    typo: ['cots', 'cost'],
  },
  {
    what: 'request options',
    known: ['cost', 'shadow'],
    call: (extra) => {
      const { limiter, state } = limiterWithState();
      return { run: () => limiter.allowRequest('alice', { ...extra }), state };
    },
    typo: ['COST', 'cost'],
  },
  {
    what: 'request options',
    known: ['cost', 'shadow'],
    call: (extra) => {
      const { limiter, state } = limiterWithState();
      return { run: () => limiter.peek('alice', { ...extra }), state };
    },
    typo: ['costs', 'cost'],
  },
  {
    what: 'request options',
    known: ['cost', 'shadow'],
    call: (extra) => {
      const { limiter, state } = limiterWithState();
      return { run: () => limiter.peekSync('alice', { ...extra }), state };
    },
    typo: ['Cost', 'cost'],
  },
  ...(['allowRequest', 'allowRequestSync', 'peek', 'peekSync'] as const).map(
    (method): Case => ({
      what: 'request options',
      known: ['cost', 'shadow'],
      call: (extra) => {
        const { limiter, state } = limiterWithState();
        const other = new RateLimiter({ threshold: 1, windowSeconds: 1, clock: fixedClock, strategy: new GCRA() });
        const group = new RateLimitGroup([limiter, other]);
        return { run: () => group[method]('bob', { ...extra }), state: () => [state(), other.stats(), other.peekSync('bob')] };
      },
      typo: ['cost_', 'cost'],
    }),
  ),
  {
    what: 'waitForSlot options',
    known: ['signal', 'maxWaitSeconds', 'cost'],
    call: (extra) => {
      const { limiter, state } = limiterWithState();
      return { run: () => limiter.waitForSlot('bob', { maxWaitSeconds: 0, ...extra }), state };
    },
    typo: ['maxWait', 'maxWaitSeconds'],
  },
  {
    what: 'RateLimitGroup members[1]',
    known: ['limiter', 'key', 'name'],
    call: (extra) => {
      const limiter = new RateLimiter({ threshold: 1, windowSeconds: 1 });
      return { run: () => new RateLimitGroup([limiter, { limiter, key: () => 'global', name: 'global', ...extra }]) };
    },
    typo: ['nmae', 'name'],
  },
  {
    what: 'RedisSlidingWindowLog options',
    known: REDIS,
    call: (extra) => ({ run: () => new RedisSlidingWindowLog({ client: redis, prefix: 'a:', ...extra }) }),
    typo: ['timeoutMs', 'timeoutSeconds'],
  },
  {
    what: 'RedisGCRA options',
    known: REDIS,
    call: (extra) => ({ run: () => new RedisGCRA({ client: redis, prefix: 'a:', ...extra }) }),
    typo: ['onfailure', 'onFailure'],
  },
  {
    what: 'expressRateLimit options',
    known: ADDRESS_MIDDLEWARE,
    call: (extra) => ({ run: () => expressRateLimit({ limiter: new RateLimiter({ threshold: 1, windowSeconds: 1 }), ...extra }) }),
    typo: ['standardHeader', 'standardHeaders'],
  },
  {
    what: 'fastifyRateLimit options',
    known: ADDRESS_MIDDLEWARE,
    call: (extra) => ({ run: () => fastifyRateLimit({ limiter: new RateLimiter({ threshold: 1, windowSeconds: 1 }), ...extra }) }),
    typo: ['legacyheaders', 'legacyHeaders'],
  },
  {
    what: 'withRateLimit / checkRateLimit options',
    known: MIDDLEWARE,
    call: (extra) => ({
      run: () => withRateLimit(() => new Response('ok'), { limiter: new RateLimiter({ threshold: 1, windowSeconds: 1 }), key: () => 'k', ...extra }),
    }),
    typo: ['onReject', 'onRejected'],
  },
  {
    what: 'withRateLimit / checkRateLimit options',
    known: MIDDLEWARE,
    call: (extra) => {
      const { limiter, state } = limiterWithState();
      return { run: () => checkRateLimit(new Request('http://127.0.0.1/'), { limiter, key: () => 'bob', ...extra }), state };
    },
    typo: ['skipp', 'skip'],
  },
  {
    what: 'honoRateLimit options',
    known: HONO_MIDDLEWARE,
    call: (extra) => ({ run: () => honoRateLimit({ limiter: new RateLimiter({ threshold: 1, windowSeconds: 1 }), ...extra }) }),
    typo: ['varaible', 'variable'],
  },
  {
    what: 'RateWardenModule options',
    known: NEST_MODULE,
    // What forRoot registers and forRootAsync's factory returns, checked when the module's providers are built.
    call: (extra) => ({ run: () => compileOptions({ limits: { api: new RateLimiter({ threshold: 1, windowSeconds: 1 }) }, ...extra }) }),
    typo: ['defaultLimit', 'defaultLimits'],
  },
  {
    what: 'RateWardenModule.forRootAsync options',
    known: ['imports', 'inject', 'useFactory'],
    call: (extra) => ({ run: () => RateWardenModule.forRootAsync({ useFactory: () => ({ limits: {} }), ...extra }) }),
    typo: ['injects', 'inject'],
  },
  {
    what: 'limits["api"]',
    known: ['limiter', 'key'],
    call: (extra) => ({
      run: () => compileOptions({ limits: { api: { limiter: new RateLimiter({ threshold: 1, windowSeconds: 1 }), ...extra } } }),
    }),
    typo: ['keys', 'key'],
  },
  {
    what: 'policy',
    known: ['name', 'windowSeconds'],
    call: (extra) => ({
      run: () => expressRateLimit({ limiter: new RateLimiter({ threshold: 1, windowSeconds: 1 }), policy: { windowSeconds: 1, ...extra } }),
    }),
    typo: ['window', 'windowSeconds'],
  },
  {
    what: 'rateLimitHeaders options',
    known: ['policy', 'standard', 'legacy'],
    call: (extra) => ({ run: () => rateLimitHeaders(allowed, { policy: { windowSeconds: 1 }, ...extra }) }),
    typo: ['standrd', 'standard'],
  },
  {
    what: 'policy[0]',
    known: ['name', 'windowSeconds'],
    call: (extra) => ({ run: () => rateLimitHeaders(allowed, { policy: [{ windowSeconds: 1, ...extra }] }) }),
    typo: ['windowMs', 'windowSeconds'],
  },
  {
    what: 'rateLimitProblem options',
    known: ['type', 'title'],
    call: (extra) => ({ run: () => rateLimitProblem({ ...allowed, allowed: false, retryAfter: 1 }, { ...extra }) }),
    typo: ['titel', 'title'],
  },
  {
    what: 'ipKey options',
    known: ['ipv6Subnet'],
    call: (extra) => ({ run: () => ipKey('2001:db8:1:2:3:4:5:6', { ipv6Subnet: 48, ...extra }) }),
    typo: ['ipv6subnet', 'ipv6Subnet'],
  },
];

/** What `run` threw, or its promise(s) rejected with; `undefined` when it succeeded. */
async function failure(run: () => unknown): Promise<unknown> {
  let done: unknown;
  try {
    done = run();
  } catch (error) {
    return error;
  }
  for (const value of Array.isArray(done) ? done : [done]) {
    if (value instanceof Promise) {
      try {
        await value;
      } catch (error) {
        return error;
      }
    }
  }
  return undefined;
}

/** Whether `error` is the unknown-option error of `key` in `what`. */
function expectUnknown(error: unknown, key: string, what: string): void {
  expect(error).toBeInstanceOf(RateWardenTypeError);
  expect(error).toBeInstanceOf(TypeError);
  expect((error as RateWardenTypeError).code).toBe(ErrorCode.UnknownOption);
  const message = (error as Error).message;
  expect(message).toMatch(/^Unknown option `.*` in /s);
  expect(message).toContain(` in ${what}: `);
  // A printable key is shown as it is; any other escaped (see known-options.test.ts).
  if (/^[\x20-\x5f\x61-\x7e]{1,60}$/.test(key)) expect(message.startsWith(`Unknown option \`${key}\` in ${what}: `)).toBe(true);
  // Nothing a terminal would interpret, whatever the key.
  // eslint-disable-next-line no-control-regex
  expect(message).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/);
}

describe('every options object rejects unknown keys, naming the key and the option meant', () => {
  it.each(cases.map((c, i) => [`${i + 1}. ${c.what}: ${c.typo[0]}`, c] as const))('%s', async (_name, c) => {
    const [typo, meant] = c.typo;
    // A rejected call leaves the state as it was.
    const { run, state } = c.call({ [typo]: 1 });
    const before = state?.();
    const error = await failure(run);
    expectUnknown(error, typo, c.what);
    expect((error as Error).message).toBe(`Unknown option \`${typo}\` in ${c.what}: did you mean \`${meant}\`?`);
    expect(state?.()).toEqual(before);
    // Nothing close: the message lists the options instead.
    const far = await failure(c.call({ zzzzzzzzzz: 1 }).run);
    expect((far as Error).message).toBe(
      `Unknown option \`zzzzzzzzzz\` in ${c.what}: expected one of ${c.known.map((k) => `\`${k}\``).join(', ')}`,
    );
    // An unknown key is an error even when its value is undefined.
    expectUnknown(await failure(c.call({ [typo]: undefined }).run), typo, c.what);
    // Valid options still work.
    expect(await failure(c.call({}).run)).toBeUndefined();
  });
});

describe('an unknown key of any spelling is named in the error (property)', () => {
  const printable = fc.string({ minLength: 1, maxLength: 30 });
  const anyString = fc.string({ unit: 'binary', maxLength: 80 });
  for (const c of cases) {
    it(`${c.what} (case ${cases.indexOf(c) + 1})`, async () => {
      await fc.assert(
        fc.asyncProperty(fc.oneof(printable, anyString), async (key) => {
          fc.pre(!c.known.includes(key));
          const error = await failure(c.call({ [key]: true }).run);
          expectUnknown(error, key, c.what);
        }),
        { numRuns: 60 },
      );
      // Every known key, with a valid value or undefined, is accepted.
      const undefinedOptions = Object.fromEntries(c.known.filter((k) => !required.has(k)).map((k) => [k, undefined]));
      expect(await failure(c.call(undefinedOptions).run)).toBeUndefined();
    });
  }
});

/** Keys that cannot be undefined in every case (required options, or set by the call itself). */
const required = new Set(['threshold', 'windowSeconds', 'limiter', 'client', 'prefix', 'key', 'policy', 'limits', 'useFactory']);
