// One deterministic scenario over the BUILT package (dist/, as published), run unchanged under
// Node.js (the reference), Bun, Deno and workerd by test/integration/runtimes.test.ts, which
// deep-equals every runtime's transcript with Node's.
//
// Plain ESM with no Node.js globals (no `process`, no `Buffer`) and relative imports only (but
// for `hono`, in hono-part.mjs), so that each runtime resolves it as it is: Node, Bun and Deno
// from the file system, workerd from the modules its generated config embeds under the same
// relative names. Every limiter reads an injected clock (`clock`), so the transcript depends on
// nothing but the code.
//
// The transcript is JSON: decisions (every field of each result), headers, problem bodies, HTTP
// statuses, header fields and bodies of the Fetch middleware, errors (class, code, message).
// Numbers that JSON cannot hold (Infinity) are written as strings.
import {
  FixedWindow,
  GCRA,
  RateLimitGroup,
  RateLimiter,
  RateWardenRangeError,
  RateWardenTypeError,
  RateWardenWaitError,
  SlidingWindowCounter,
  SlidingWindowLog,
  TokenBucket,
  createQuota,
  ipKey,
  rateLimitHeaders,
  rateLimitProblem,
} from '../../dist/index.js';
import { checkRateLimit, withRateLimit } from '../../dist/fetch.js';
import { honoScenario } from './hono-part.mjs';

/** The five in-memory strategies, by the name their limiter reports. */
const STRATEGIES = {
  'sliding-window-log': () => new SlidingWindowLog(),
  'sliding-window-counter': () => new SlidingWindowCounter(),
  'fixed-window': () => new FixedWindow(),
  'token-bucket': () => new TokenBucket(),
  gcra: () => new GCRA(),
};

/** A settable clock in milliseconds, for the `clock` option. */
function manualClock() {
  const clock = { now: 0, read: () => clock.now };
  return clock;
}

/** What a thrown value says: its class, its standard parents, its code and message. */
function describeError(error) {
  if (!(error instanceof Error)) return { thrown: String(error) };
  return {
    name: error.name,
    typeError: error instanceof TypeError,
    rangeError: error instanceof RangeError,
    rateWarden: error instanceof RateWardenTypeError || error instanceof RateWardenRangeError || error instanceof RateWardenWaitError,
    code: error.code,
    message: error.message,
  };
}

/** Runs `fn` (sync or async) and returns what it returned, or the error it threw. */
async function outcome(fn) {
  try {
    return { value: await fn() };
  } catch (error) {
    return { error: describeError(error) };
  }
}

/** A Fetch Response as data: status, header fields (in the order the runtime iterates them) and body text. */
async function responseRecord(response) {
  return { status: response.status, headers: [...response.headers], body: await response.text() };
}

/** A handler's own response, with its content type set explicitly (runtimes differ on implicit ones). */
function json(value, status = 200) {
  return new Response(JSON.stringify(value), { status, headers: { 'content-type': 'application/json' } });
}

/** Each of the five strategies: a burst, costs, peeks, the window moving, a penalty, a reset, stats. */
function strategies() {
  const out = {};
  for (const [name, make] of Object.entries(STRATEGIES)) {
    const clock = manualClock();
    const limiter = new RateLimiter({ threshold: 3, windowSeconds: 10, strategy: make(), clock: clock.read });
    const steps = [];
    const at = (ms, what, fn) => {
      clock.now = ms;
      steps.push({ at: ms, what, result: fn() });
    };
    at(0, 'allow', () => limiter.allowRequestSync('alice'));
    at(0, 'allow cost 2', () => limiter.allowRequestSync('alice', { cost: 2 }));
    at(0, 'allow (over the limit)', () => limiter.allowRequestSync('alice'));
    at(0, 'peek', () => limiter.peekSync('alice'));
    at(0, 'cost above the threshold', () => limiter.allowRequestSync('alice', { cost: 4 }));
    at(0, 'another key', () => limiter.allowRequestSync({ id: 'bob', name: 'Bob' }));
    at(2_500, 'allow', () => limiter.allowRequestSync('alice'));
    at(5_000, 'allow', () => limiter.allowRequestSync('alice'));
    at(9_999, 'allow', () => limiter.allowRequestSync('alice'));
    at(10_000, 'allow', () => limiter.allowRequestSync('alice'));
    at(12_500, 'allow', () => limiter.allowRequestSync('alice'));
    at(15_000, 'penalty 2', () => limiter.penaltySync('alice', 2));
    at(15_000, 'allow after the penalty', () => limiter.allowRequestSync('alice'));
    at(40_000, 'allow', () => limiter.allowRequestSync('alice'));
    const reset = limiter.reset('alice');
    at(40_000, 'allow after reset', () => limiter.allowRequestSync('alice'));
    clock.now = 100_000;
    out[name] = { steps, reset, size: limiter.size, cleanedUp: limiter.cleanUp(), stats: limiter.stats() };
    limiter.close();
  }
  return out;
}

/** The promise API on every strategy, and tiers (`limitFor`). */
async function asyncAndTiers() {
  const clock = manualClock();
  const out = { promise: {}, tiers: [] };
  for (const [name, make] of Object.entries(STRATEGIES)) {
    const limiter = new RateLimiter({ threshold: 2, windowSeconds: 1, strategy: make(), clock: clock.read });
    out.promise[name] = [
      await limiter.allowRequest('k'),
      await limiter.allowRequest('k', { cost: 2 }),
      await limiter.peek('k'),
      await limiter.allowRequest('k'),
    ];
    limiter.close();
  }
  const pro = { threshold: 5, windowSeconds: 60, tier: 'pro' };
  const tiered = new RateLimiter({
    threshold: 2,
    windowSeconds: 60,
    tier: 'free',
    clock: clock.read,
    limitFor: (user) => (user.name === 'pro' ? pro : undefined),
  });
  const decisions = [];
  tiered.on('decision', (info) => decisions.push(info));
  for (const user of [{ id: 'a' }, { id: 'a' }, { id: 'a' }, { id: 'b', name: 'pro' }, { id: 'b', name: 'pro' }]) {
    out.tiers.push(tiered.allowRequestSync(user));
  }
  out.decisionEvents = decisions;
  tiered.close();
  return out;
}

/** A group of three limits (two strategies, a global key): all or nothing, peeks, reservations. */
async function group() {
  const clock = manualClock();
  const perSecond = new RateLimiter({ threshold: 2, windowSeconds: 1, clock: clock.read });
  const perMinute = new RateLimiter({ threshold: 4, windowSeconds: 60, strategy: new GCRA(), clock: clock.read });
  const global = new RateLimiter({ threshold: 5, windowSeconds: 60, strategy: new FixedWindow(), clock: clock.read });
  const limits = new RateLimitGroup([
    { limiter: perSecond, name: 'burst' },
    { limiter: perMinute, name: 'minute' },
    { limiter: global, name: 'global', key: () => 'everyone' },
  ]);
  const policy = [{ windowSeconds: 1 }, { windowSeconds: 60 }, { windowSeconds: 60 }];
  const steps = [];
  const step = async (ms, what, fn) => {
    clock.now = ms;
    const result = await fn();
    steps.push({ at: ms, what, result, headers: rateLimitHeaders(result, { policy, legacy: true }) });
    return result;
  };
  await step(0, 'allowRequestSync alice', () => limits.allowRequestSync('alice'));
  await step(0, 'allowRequest alice', () => limits.allowRequest('alice'));
  const refused = await step(0, 'alice over the per-second limit', () => limits.allowRequestSync('alice'));
  await step(0, 'peek bob', () => limits.peek('bob'));
  await step(1_000, 'bob cost 2', () => limits.allowRequest({ id: 'bob' }, { cost: 2 }));
  const reservation = await step(1_000, 'reserve carol', () => limits.reserve('carol'));
  const refunded = await reservation.refund();
  await step(1_000, 'peekSync carol after the refund', () => limits.peekSync('carol'));
  const syncReservation = await step(2_000, 'reserveSync carol', () => limits.reserveSync('carol'));
  const syncRefund = syncReservation.refund();
  await step(2_000, 'global limit binds', () => limits.allowRequestSync('dave', { cost: 2 }));
  const out = {
    steps,
    refused: { names: refused.names, binding: refused.binding, problem: rateLimitProblem(refused) },
    refunded,
    syncRefund,
    sizes: [perSecond.size, perMinute.size, global.size],
  };
  for (const limiter of [perSecond, perMinute, global]) limiter.close();
  return out;
}

/** Reservations and refunds on one limiter, promise and synchronous. */
async function refunds() {
  const out = {};
  for (const [name, make] of Object.entries(STRATEGIES)) {
    const clock = manualClock();
    const limiter = new RateLimiter({ threshold: 3, windowSeconds: 10, strategy: make(), clock: clock.read });
    const first = await limiter.reserve('k', { cost: 2 });
    clock.now = 100;
    const partial = await first.refund(1);
    const again = await first.refund();
    const twice = await first.refund();
    const sync = limiter.reserveSync('k', { cost: 3 });
    const refusedReservation = limiter.reserveSync('k', { cost: 3 });
    const refusedRefund = refusedReservation.refund();
    const syncRefund = sync.refund();
    out[name] = {
      first: { allowed: first.allowed, remaining: first.remaining, cost: first.cost },
      partial,
      again,
      twice,
      sync: { allowed: sync.allowed, remaining: sync.remaining, cost: sync.cost, refund: syncRefund },
      refused: { allowed: refusedReservation.allowed, retryAfter: refusedReservation.retryAfter, refund: refusedRefund },
      tooMany: await outcome(() => limiter.reserveSync('other').refund(2)),
      peek: limiter.peekSync('k'),
    };
    limiter.close();
  }
  return out;
}

/** Blocks: started by a refusal, extended or not, set by hand, lifted by reset. */
async function blocks() {
  const clock = manualClock();
  const out = {};
  for (const extendBlock of [false, true]) {
    const limiter = new RateLimiter({ threshold: 2, windowSeconds: 10, blockSeconds: 30, extendBlock, clock: clock.read });
    clock.now = 0;
    const steps = [];
    for (const ms of [0, 0, 0, 15_000, 29_999, 30_000, 44_999, 45_000]) {
      clock.now = ms;
      steps.push({ at: ms, result: limiter.allowRequestSync('mallory') });
    }
    steps.push({ blocked: limiter.stats().blocked });
    out[extendBlock ? 'extendBlock' : 'block'] = steps;
    limiter.close();
  }
  const clock2 = manualClock();
  const limiter = new RateLimiter({ threshold: 5, windowSeconds: 10, strategy: new TokenBucket(), clock: clock2.read });
  await limiter.block('eve', 12.5);
  const byHand = [limiter.allowRequestSync('eve')];
  clock2.now = 12_500;
  byHand.push(limiter.allowRequestSync('eve'));
  limiter.blockSync('eve', 1);
  byHand.push(limiter.peekSync('eve'), limiter.reset('eve'), limiter.allowRequestSync('eve'));
  byHand.push(await outcome(() => limiter.blockSync('eve', -1)));
  out.byHand = byHand;
  limiter.close();
  return out;
}

/** Header fields, problem bodies, keys and the documented errors. */
async function helpers() {
  const clock = manualClock();
  const limiter = new RateLimiter({ threshold: 1, windowSeconds: 60, clock: clock.read });
  const allowed = limiter.allowRequestSync('k');
  const refused = limiter.allowRequestSync('k');
  const never = limiter.allowRequestSync('k', { cost: 2 });
  const out = {
    headers: [
      rateLimitHeaders(allowed, { policy: { name: 'per-minute', windowSeconds: 60 } }),
      rateLimitHeaders(refused, { policy: { windowSeconds: 60 }, legacy: true }),
      rateLimitHeaders(never, { policy: { windowSeconds: 60 } }),
    ],
    problems: [rateLimitProblem(refused), rateLimitProblem(never)],
    quota: createQuota({ threshold: 5, windowSeconds: 1.017, tier: 'pro' }),
    ipKeys: [
      ipKey('127.0.0.1'),
      ipKey('::ffff:198.51.100.7'),
      ipKey('2001:DB8:1:2:3:4:5:6'),
      ipKey('2001:db8:1:2::9%eth0', { ipv6Subnet: 48 }),
      ipKey('2001:db8::1', { ipv6Subnet: false }),
      ipKey('unknown'),
    ],
    errors: [
      await outcome(() => new RateLimiter({ threshold: 0, windowSeconds: 1 })),
      await outcome(() => new RateLimiter({ threshold: 1, windowSeconds: 0.0015 })),
      await outcome(() => new RateLimiter({ threshold: 1, windowMs: 1000 })),
      await outcome(() => new RateLimiter({ threshold: 1, windowSeconds: 1, maxkeys: 5 })),
      await outcome(() => limiter.allowRequestSync('')),
      await outcome(() => limiter.allowRequest('k', { cost: 1.5 })),
      await outcome(() => limiter.waitForSlot('k', { maxWaitSeconds: 1 })),
      await outcome(() => rateLimitProblem(allowed)),
      await outcome(() => ipKey('1.2.3.4', { ipv6Subnet: 129 })),
    ],
    dispose: typeof Symbol.dispose === 'symbol' && typeof limiter[Symbol.dispose] === 'function',
  };
  limiter.close();
  return out;
}

/** `ratewarden/fetch`: withRateLimit and checkRateLimit on real Fetch Requests and Responses. */
async function fetchMiddleware() {
  const clock = manualClock();
  const url = (path) => `https://api.example${path}`;
  const from = (client, path = '/hello', init = {}) =>
    new Request(url(path), { ...init, headers: { 'x-client': client, ...(init.headers ?? {}) } });
  const key = (request) => request.headers.get('x-client') ?? 'anonymous';
  const out = {};
  const run = async (name, handler, requests) => {
    out[name] = [];
    for (const request of requests) {
      const result = await outcome(async () => responseRecord(await handler(request)));
      out[name].push(result.error === undefined ? result.value : result);
    }
  };

  const hello = async (request) => json({ path: new URL(request.url).pathname });
  const limiter = new RateLimiter({ threshold: 2, windowSeconds: 60, clock: clock.read });
  await run('default', withRateLimit(hello, { limiter, key }), [from('a'), from('a'), from('a'), from('b')]);

  const legacy = new RateLimiter({ threshold: 3, windowSeconds: 10, strategy: new SlidingWindowCounter(), clock: clock.read });
  await run(
    'costs, skip, legacy headers',
    withRateLimit(hello, {
      limiter: legacy,
      key,
      legacyHeaders: true,
      cost: (request) => (request.method === 'POST' ? 2 : 1),
      skip: (request) => new URL(request.url).pathname === '/health',
    }),
    [from('a', '/upload', { method: 'POST' }), from('a', '/upload', { method: 'POST' }), from('a'), from('a', '/health'), from('a')],
  );

  // onRejected: each kind of return value, and a Response of its own.
  const bodies = [
    ['string', () => 'slow down'],
    ['object', (_request, result) => ({ error: 'Too many requests', retryAfter: Math.ceil(result.retryAfter) })],
    ['undefined', () => undefined],
    ['Response', () => new Response('busy', { status: 503, headers: { 'content-type': 'text/plain', 'retry-after': '120' } })],
  ];
  for (const [kind, onRejected] of bodies) {
    const one = new RateLimiter({ threshold: 1, windowSeconds: 30, strategy: new FixedWindow(), clock: clock.read });
    await run(`onRejected returns ${kind}`, withRateLimit(hello, { limiter: one, key, onRejected }), [from('a'), from('a')]);
  }

  // Responses whose headers the runtime made immutable, and a handler's own RateLimit field.
  const immutable = new RateLimiter({ threshold: 5, windowSeconds: 60, strategy: new TokenBucket(), clock: clock.read });
  await run(
    'redirect and own headers',
    withRateLimit(
      (request) =>
        new URL(request.url).pathname === '/old'
          ? Response.redirect(url('/new'), 301)
          : new Response('own', { headers: { 'content-type': 'text/plain', RateLimit: '"mine";r=1;t=1' } }),
      { limiter: immutable, key },
    ),
    [from('a', '/old'), from('a', '/own')],
  );

  // Counting only failures (a login form), with a group and per-limit policies.
  const login = new RateLimitGroup([
    { limiter: new RateLimiter({ threshold: 2, windowSeconds: 900, clock: clock.read }), name: 'pair' },
    { limiter: new RateLimiter({ threshold: 10, windowSeconds: 86_400, strategy: new GCRA(), clock: clock.read }), name: 'day' },
  ]);
  const attempt = (password) => from('ada', '/login', { method: 'POST', body: JSON.stringify({ password }) });
  await run(
    'skipSuccessfulRequests with a group',
    withRateLimit(
      async (request) => {
        const { password } = await request.json();
        return password === 'correct horse' ? json({ ok: true }) : json({ error: 'wrong password' }, 401);
      },
      { limiter: login, key, skipSuccessfulRequests: true, policy: [{ windowSeconds: 900 }, { windowSeconds: 86_400 }] },
    ),
    ['correct horse', 'guess', 'correct horse', 'guess', 'correct horse'].map(attempt),
  );

  // Errors: a key that throws, without and with onError.
  const failing = new RateLimiter({ threshold: 1, windowSeconds: 1, clock: clock.read });
  const badKey = () => {
    throw new TypeError('no key for this request');
  };
  await run('key throws', withRateLimit(hello, { limiter: failing, key: badKey }), [from('a')]);
  await run('key throws, onError allows', withRateLimit(hello, { limiter: failing, key: badKey, onError: () => 'allow' }), [from('a')]);
  out['options errors'] = [
    await outcome(() => withRateLimit(hello, { limiter: failing })),
    await outcome(() => withRateLimit(hello, { limiter: failing, key, onrejected: () => 'x' })),
    await outcome(() => withRateLimit(hello, { limiter: failing, key, skipSuccessfulRequests: true, skipFailedRequests: true })),
  ];

  // checkRateLimit: the decision, the headers and the response to send; settle() refunds.
  const checked = new RateLimiter({ threshold: 1, windowSeconds: 60, strategy: new SlidingWindowLog(), clock: clock.read });
  const options = { limiter: checked, key, skipFailedRequests: true };
  const checks = [];
  for (const status of [500, 200, 200]) {
    const check = await checkRateLimit(from('z'), options);
    checks.push({
      result: check.result,
      headers: check.headers,
      response: check.response === undefined ? null : await responseRecord(check.response),
    });
    if (check.response === undefined) await check.settle(new Response(null, { status }));
  }
  out.checkRateLimit = checks;
  return out;
}

/**
 * The scenario: the core, `ratewarden/fetch` and `ratewarden/hono` (hono-part.mjs). Not
 * `ratewarden/redis`, whose strategies need a Redis.
 * @returns the transcript, JSON-safe.
 */
export async function runScenario() {
  const transcript = {
    entries: ['ratewarden', 'ratewarden/fetch', 'ratewarden/hono'],
    strategies: strategies(),
    asyncAndTiers: await asyncAndTiers(),
    group: await group(),
    refunds: await refunds(),
    blocks: await blocks(),
    helpers: await helpers(),
    fetch: await fetchMiddleware(),
    hono: await honoScenario(responseRecord),
  };
  return JSON.parse(JSON.stringify(transcript, (_key, value) => (typeof value === 'number' && !Number.isFinite(value) ? String(value) : value)));
}
