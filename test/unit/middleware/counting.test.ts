// Counting only failures (or only successes) in the shared decision path: skipSuccessfulRequests,
// skipFailedRequests and requestWasSuccessful — their validation in every middleware and the Nest
// module, decide-then-refund (`reserve`, then `refund()` when the response is of the kind skipped),
// the errors after the response, and Node's response end (onResponseEnd) — with a fake limiter
// and fake responses: no framework and no server. Each framework is tested through a real server
// in test/integration/middleware/counting.test.ts.
import { EventEmitter } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RateLimiter, type RateLimitResult } from '../../../src/index.js';
import { FAILED, REFUND_FAILED, checkOptions, decide, settle, type MiddlewareConfig } from '../../../src/middleware/common.js';
import { expressRateLimit } from '../../../src/middleware/express.js';
import { fastifyRateLimit } from '../../../src/middleware/fastify.js';
import { checkRateLimit, withRateLimit } from '../../../src/middleware/fetch.js';
import { onResponseEnd, type NodeResponse } from '../../../src/middleware/response-end.js';
import { compileOptions } from '../../../src/nestjs/options.js';
import { knownOptions } from '../../../src/errors.js';
import { captureWarnings } from '../../support/warnings.js';

/**
 * A limiter of `threshold` requests that never forgets (no window): `allowRequest` and `reserve`
 * count, `refund()` gives back once. Records every call.
 */
function fakeLimiter(threshold = 2, refund: () => Promise<boolean> = () => Promise.resolve(true)) {
  const calls = { allowRequest: 0, reserve: 0, refund: 0 };
  let used = 0;
  const decideOne = (): RateLimitResult => {
    const allowed = used < threshold;
    if (allowed) used++;
    return { allowed, remaining: threshold - used, retryAfter: allowed ? 0 : 60, limit: threshold, resetAfter: 60 };
  };
  const limiter = {
    windowSeconds: 60,
    allowRequest: () => {
      calls.allowRequest++;
      return Promise.resolve(decideOne());
    },
    reserve: () => {
      calls.reserve++;
      const result = decideOne();
      let left = result.allowed ? 1 : 0;
      return Promise.resolve({
        ...result,
        cost: 1,
        refund: async () => {
          calls.refund++;
          if (left === 0) return false;
          const done = await refund();
          left = 0;
          used--;
          return done;
        },
      });
    },
  };
  return { limiter, calls, used: () => used };
}

const KNOWN = knownOptions('test options', {
  limiter: true,
  key: true,
  skip: true,
  cost: true,
  policy: true,
  mode: true,
  standardHeaders: true,
  legacyHeaders: true,
  onError: true,
  skipSuccessfulRequests: true,
  skipFailedRequests: true,
  requestWasSuccessful: true,
});

interface Req {
  readonly id: string;
}
interface Res {
  readonly statusCode: number;
}

function config(options: Record<string, unknown>, limiter: object = fakeLimiter().limiter): MiddlewareConfig<Req> {
  return checkOptions<Req>({ limiter: limiter as RateLimiter, key: (req: Req) => req.id, ...options }, KNOWN, 'no address');
}

const req: Req = { id: 'alice' };
const ok = (statusCode = 200) => ({ res: { statusCode }, status: statusCode });

afterEach(() => {
  vi.restoreAllMocks();
});

describe('the counting options are validated like the others, in every middleware and the Nest module', () => {
  const limiter = () => new RateLimiter({ threshold: 1, windowSeconds: 1 });
  const builders: [string, (options: Record<string, unknown>) => unknown][] = [
    ['expressRateLimit', (options) => expressRateLimit({ limiter: limiter(), ...options })],
    ['fastifyRateLimit', (options) => fastifyRateLimit({ limiter: limiter(), ...options })],
    ['withRateLimit', (options) => withRateLimit(() => new Response('ok'), { limiter: limiter(), key: () => 'k', ...options })],
    ['RateWardenModule', (options) => compileOptions({ limits: { api: limiter() }, ...options })],
  ];
  it.each(builders)('%s', (_name, build) => {
    expect(() => build({ skipSuccessfulRequests: 'yes' })).toThrow(
      expect.objectContaining({
        name: 'TypeError',
        code: 'ERR_RATEWARDEN_INVALID_TYPE',
        message: 'Expected `skipSuccessfulRequests` to be a boolean or undefined, got `"yes"` (string)',
      }),
    );
    expect(() => build({ skipFailedRequests: 1 })).toThrow(
      expect.objectContaining({ name: 'TypeError', message: 'Expected `skipFailedRequests` to be a boolean or undefined, got `1` (number)' }),
    );
    expect(() => build({ skipFailedRequests: true, requestWasSuccessful: 'status < 400' })).toThrow(
      expect.objectContaining({ name: 'TypeError', message: expect.stringMatching(/^Expected `requestWasSuccessful` to be a function or undefined, got/) }),
    );
    // Given without a skip option, it would decide nothing.
    expect(() => build({ requestWasSuccessful: () => true })).toThrow(
      expect.objectContaining({
        name: 'TypeError',
        message: expect.stringMatching(/^Expected `requestWasSuccessful` to be undefined unless `skipSuccessfulRequests` or `skipFailedRequests` is true/),
      }),
    );
    expect(() => build({ skipSuccessfulRequests: false, requestWasSuccessful: () => true })).toThrow(TypeError);
    // Both: every response would be given back.
    expect(() => build({ skipSuccessfulRequests: true, skipFailedRequests: true })).toThrow(
      expect.objectContaining({
        name: 'RangeError',
        code: 'ERR_RATEWARDEN_OUT_OF_RANGE',
        message: expect.stringMatching(/^Expected `skipFailedRequests` to be false when `skipSuccessfulRequests` is true/),
      }),
    );
    // Valid combinations.
    expect(() => build({ skipSuccessfulRequests: true })).not.toThrow();
    expect(() => build({ skipFailedRequests: true, requestWasSuccessful: () => true })).not.toThrow();
    expect(() => build({ skipSuccessfulRequests: false, skipFailedRequests: false })).not.toThrow();
    expect(() => build({ skipSuccessfulRequests: undefined, skipFailedRequests: undefined, requestWasSuccessful: undefined })).not.toThrow();
  });

  it('a limiter without `reserve` cannot count only some responses', () => {
    const { limiter } = fakeLimiter();
    const { reserve: _reserve, ...withoutReserve } = limiter;
    expect(() => config({ skipFailedRequests: true }, withoutReserve)).toThrow(
      expect.objectContaining({
        name: 'TypeError',
        message: 'Expected `skipFailedRequests` to be false with a limiter that cannot `reserve` (counting only some responses gives requests back), got `true` (boolean)',
      }),
    );
    expect(() => config({}, withoutReserve)).not.toThrow();
  });
});

describe('decide: allowRequest as before without the options, reserve with them', () => {
  it('without skip options, decides with allowRequest and leaves nothing to settle', async () => {
    const fake = fakeLimiter();
    const decision = await decide(config({}, fake.limiter), req);
    expect(fake.calls).toEqual({ allowRequest: 1, reserve: 0, refund: 0 });
    expect(decision?.reservation).toBeUndefined();
  });

  it('with a skip option, reserves; a refused request has nothing to give back; headers report the decision', async () => {
    const fake = fakeLimiter(1);
    const c = config({ skipSuccessfulRequests: true }, fake.limiter);
    const allowed = await decide(c, req);
    expect(fake.calls).toEqual({ allowRequest: 0, reserve: 1, refund: 0 });
    expect(allowed?.reservation).toBeDefined();
    expect(allowed?.headers.RateLimit).toBe('"default";r=0;t=60');
    const refused = await decide(c, req);
    expect(refused?.refuse).toBe(true);
    expect(refused?.reservation).toBeUndefined();
  });
});

describe('settle: which responses are given back', () => {
  async function settled(options: Record<string, unknown>, outcome: Parameters<typeof settle<Req, Res>>[3]) {
    const fake = fakeLimiter();
    const c = config(options, fake.limiter);
    const decision = await decide(c, req);
    await settle(c, req, decision!, outcome);
    return fake;
  }

  it('skipSuccessfulRequests: a status below 400 is given back; 400 and above, and a failed end, stay counted', async () => {
    expect((await settled({ skipSuccessfulRequests: true }, ok(200))).used()).toBe(0);
    expect((await settled({ skipSuccessfulRequests: true }, ok(399))).used()).toBe(0);
    expect((await settled({ skipSuccessfulRequests: true }, ok(400))).used()).toBe(1);
    expect((await settled({ skipSuccessfulRequests: true }, ok(500))).used()).toBe(1);
    const aborted = await settled({ skipSuccessfulRequests: true }, FAILED);
    expect(aborted.used()).toBe(1);
    expect(aborted.calls.refund).toBe(0);
  });

  it('skipFailedRequests: 400 and above, and a failed end (abort, disconnect, thrown handler), are given back', async () => {
    expect((await settled({ skipFailedRequests: true }, ok(200))).used()).toBe(1);
    expect((await settled({ skipFailedRequests: true }, ok(404))).used()).toBe(0);
    expect((await settled({ skipFailedRequests: true }, FAILED)).used()).toBe(0);
  });

  it('requestWasSuccessful decides, with the request and response; only a real `true` is a success; not asked for a failed end', async () => {
    const seen: unknown[] = [];
    const successful = (r: Req, res: Res) => {
      seen.push([r, res]);
      return Promise.resolve(res.statusCode === 401 ? false : res.statusCode === 418 ? ('yes' as unknown as boolean) : true);
    };
    expect((await settled({ skipSuccessfulRequests: true, requestWasSuccessful: successful }, ok(500))).used()).toBe(0);
    expect((await settled({ skipSuccessfulRequests: true, requestWasSuccessful: successful }, ok(401))).used()).toBe(1);
    expect((await settled({ skipSuccessfulRequests: true, requestWasSuccessful: successful }, ok(418))).used()).toBe(1);
    expect(seen).toEqual([
      [req, { statusCode: 500 }],
      [req, { statusCode: 401 }],
      [req, { statusCode: 418 }],
    ]);
    expect((await settled({ skipFailedRequests: true, requestWasSuccessful: successful }, FAILED)).used()).toBe(0);
    expect(seen).toHaveLength(3);
  });

  it('with the default predicate, the refund is under way before settle awaits anything', () => {
    const refund = vi.fn(() => Promise.resolve(true));
    const c = config({ skipSuccessfulRequests: true });
    void settle(c, req, { result: {} as RateLimitResult, headers: {}, refuse: false, reservation: { refund } }, ok(200));
    expect(refund).toHaveBeenCalledTimes(1);
  });
});

describe('errors after the response never crash: onError, else a warning', () => {
  const storeDown = () => Promise.reject(new Error('store down'));

  it('a refund that rejects goes to onError (its return value ignored); the request stays counted', async () => {
    const fake = fakeLimiter(2, storeDown);
    const onError = vi.fn(() => 'allow' as const);
    const c = config({ skipSuccessfulRequests: true, onError }, fake.limiter);
    const decision = await decide(c, req);
    await expect(settle(c, req, decision!, ok(200))).resolves.toBeUndefined();
    expect(onError).toHaveBeenCalledWith(req, new Error('store down'));
    expect(fake.used()).toBe(1);
  });

  it('without onError, a failed refund is a RateWardenWarning with its code', async () => {
    const { warnings, restore } = captureWarnings(REFUND_FAILED);
    try {
      const fake = fakeLimiter(2, storeDown);
      const c = config({ skipFailedRequests: true }, fake.limiter);
      await settle(c, req, (await decide(c, req))!, FAILED);
      expect(warnings).toEqual([
        { message: expect.stringMatching(/^ratewarden: an error after the response.*: store down$/), type: 'RateWardenWarning', code: REFUND_FAILED },
      ]);
    } finally {
      restore();
    }
  });

  it('an onError that throws (or rejects) is reported as the warning instead', async () => {
    const { warnings, restore } = captureWarnings(REFUND_FAILED);
    try {
      const fake = fakeLimiter(2, storeDown);
      const c = config({ skipFailedRequests: true, onError: () => Promise.reject(new Error('logger down')) }, fake.limiter);
      await settle(c, req, (await decide(c, req))!, FAILED);
      expect(warnings.map((w) => w.message)).toEqual([expect.stringMatching(/: logger down$/)]);
    } finally {
      restore();
    }
  });

  it('a requestWasSuccessful that throws goes to onError, and the response counts as failed', async () => {
    const fake = fakeLimiter();
    const onError = vi.fn();
    const c = config(
      {
        skipFailedRequests: true,
        onError,
        requestWasSuccessful: () => {
          throw new Error('bad predicate');
        },
      },
      fake.limiter,
    );
    await settle(c, req, (await decide(c, req))!, ok(200));
    expect(onError).toHaveBeenCalledWith(req, new Error('bad predicate'));
    expect(fake.used()).toBe(0); // failed, so given back under skipFailedRequests
  });
});

describe('onResponseEnd: finished, or closed without finishing', () => {
  class FakeNodeResponse extends EventEmitter implements NodeResponse {
    statusCode = 200;
    writableFinished = false;
    destroyed = false;
  }

  it("'finish' is a finished response, once: the 'close' after it is not a second end", () => {
    const res = new FakeNodeResponse();
    const done = vi.fn();
    onResponseEnd(res, done);
    res.emit('finish');
    res.emit('close');
    expect(done.mock.calls).toEqual([[true]]);
    expect(res.listenerCount('close')).toBe(0);
  });

  it("'close' without 'finish' is a response cut short", () => {
    const res = new FakeNodeResponse();
    const done = vi.fn();
    onResponseEnd(res, done);
    res.emit('close');
    res.emit('finish');
    expect(done.mock.calls).toEqual([[false]]);
    expect(res.listenerCount('finish')).toBe(0);
  });

  it('a response already over is settled at once: finished, or destroyed before finishing', () => {
    const finished = Object.assign(new FakeNodeResponse(), { writableFinished: true, destroyed: true });
    const destroyed = Object.assign(new FakeNodeResponse(), { destroyed: true });
    const done = vi.fn();
    onResponseEnd(finished, done);
    onResponseEnd(destroyed, done);
    expect(done.mock.calls).toEqual([[true], [false]]);
  });

  it("adds no 'error' listener (an error nobody listens to stays as loud as it was)", () => {
    const res = new FakeNodeResponse();
    onResponseEnd(res, () => undefined);
    expect(res.listenerCount('error')).toBe(0);
  });
});

describe('ratewarden/fetch without a server', () => {
  it('checkRateLimit: settle(response) gives a skipped request back once; a second call does nothing', async () => {
    const fake = fakeLimiter();
    const options = { limiter: fake.limiter as unknown as RateLimiter, key: () => 'k', skipSuccessfulRequests: true };
    const check = await checkRateLimit(new Request('http://127.0.0.1/'), options);
    expect(fake.used()).toBe(1);
    await check.settle(new Response('ok'));
    await check.settle(new Response('ok'));
    expect(fake.used()).toBe(0);
    expect(fake.calls.refund).toBe(1);
  });

  it('checkRateLimit: settle(undefined) is a failed request; without the options, settle is a no-op', async () => {
    const fake = fakeLimiter();
    const check = await checkRateLimit(new Request('http://127.0.0.1/'), {
      limiter: fake.limiter as unknown as RateLimiter,
      key: () => 'k',
      skipFailedRequests: true,
    });
    await check.settle(undefined);
    expect(fake.used()).toBe(0);
    const plain = fakeLimiter();
    const unsettled = await checkRateLimit(new Request('http://127.0.0.1/'), { limiter: plain.limiter as unknown as RateLimiter, key: () => 'k' });
    await unsettled.settle(new Response('ok'));
    expect(plain.used()).toBe(1);
    expect(plain.calls.reserve).toBe(0);
  });

  it('withRateLimit: a handler that throws is failed (given back under skipFailedRequests) and its error propagates', async () => {
    const fake = fakeLimiter();
    const handler = withRateLimit(
      () => {
        throw new Error('handler failed');
      },
      { limiter: fake.limiter as unknown as RateLimiter, key: () => 'k', skipFailedRequests: true },
    );
    await expect(handler(new Request('http://127.0.0.1/'))).rejects.toThrow('handler failed');
    expect(fake.used()).toBe(0);
  });

  it('withRateLimit: a request whose signal aborted before the handler returned is failed, whatever the status', async () => {
    const fake = fakeLimiter();
    const controller = new AbortController();
    const handler = withRateLimit(
      () => {
        controller.abort();
        return new Response('ok');
      },
      { limiter: fake.limiter as unknown as RateLimiter, key: () => 'k', skipSuccessfulRequests: true },
    );
    const response = await handler(new Request('http://127.0.0.1/', { signal: controller.signal }));
    expect(response.status).toBe(200);
    expect(fake.used()).toBe(1); // failed: counted under skipSuccessfulRequests
  });
});
