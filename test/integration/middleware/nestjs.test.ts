// ratewarden/nestjs in a real Nest application on each HTTP platform (@nestjs/platform-express and
// @nestjs/platform-fastify), listening on 127.0.0.1, with real requests (global fetch) and an
// injected clock: no wall clock, no sleeps. Every test uses client addresses of its own (sent in
// X-Forwarded-For, which the platform trusts from 127.0.0.1 only), so limits never leak between
// tests.
//
// Why one file of about 590 lines: what is Nest's own (decorators, the module and its async
// options, exception filters, guards on other transports), on two platforms started once each;
// what every adapter shares is in contract/contract.test.ts.
import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import {
  Catch,
  Controller,
  Get,
  HttpException,
  Module,
  Res,
  UseFilters,
  UseGuards,
  type ArgumentsHost,
  type ExceptionFilter,
  type ExecutionContext,
  type INestApplication,
  type NestApplicationOptions,
} from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import { ExpressAdapter, type NestExpressApplication } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RateLimiter } from '../../../src/index.js';
import {
  RateLimit,
  RateLimitExceededException,
  RateWardenGuard,
  RateWardenModule,
  SkipRateLimit,
  type RateWardenModuleOptions,
} from '../../../src/nestjs/index.js';
import { captureWarnings, type CapturedWarning } from '../../support/warnings.js';

let now = 0;
const clock = (): number => now;
const limiter = (threshold: number, windowSeconds = 60): RateLimiter => new RateLimiter({ threshold, windowSeconds, clock });

type Platform = 'express' | 'fastify';

/** No logs (the 500 test's error, start-up lines). */
const quiet: NestApplicationOptions = { logger: false };

/** Route handler invocations, by route. */
const calls = new Map<string, number>();
const called = (route: string): { ok: true } => {
  calls.set(route, (calls.get(route) ?? 0) + 1);
  return { ok: true };
};

/** What the custom exception filter saw. */
const caught: unknown[] = [];

/** A filter of the application's own for rate-limit refusals: a body of its own, on both platforms. */
@Catch(HttpException)
class TooManyFilter implements ExceptionFilter {
  catch(exception: HttpException, host: ArgumentsHost): void {
    caught.push(exception);
    const response = host.switchToHttp().getResponse<{ status(code: number): { send(body: unknown): unknown } }>();
    const retryAfter = exception instanceof RateLimitExceededException ? exception.result.retryAfter : undefined;
    response.status(exception.getStatus()).send({ filtered: true, retryAfter });
  }
}

@Controller('routes')
class RoutesController {
  @RateLimit('strict')
  @Get('strict')
  strict(): { ok: true } {
    return called('routes.strict');
  }

  @SkipRateLimit()
  @Get('skipped')
  skipped(): { ok: true } {
    return called('routes.skipped');
  }

}

@RateLimit('controller')
@Controller('controller')
class ControllerLevel {
  @Get()
  get(): { ok: true } {
    return called('controller');
  }

  // The route's own decorator overrides the controller's.
  @RateLimit('strict')
  @Get('override')
  override(): { ok: true } {
    return called('controller.override');
  }
}

@SkipRateLimit()
@Controller('skipped')
class SkippedController {
  @Get()
  get(): { ok: true } {
    return called('skipped');
  }

  @SkipRateLimit(false)
  @Get('limited')
  limited(): { ok: true } {
    return called('skipped.limited');
  }
}

@UseFilters(TooManyFilter)
@RateLimit('strict')
@Controller('filtered')
class FilteredController {
  @Get()
  get(): { ok: true } {
    return called('filtered');
  }
}

interface Limits {
  readonly default: RateLimiter;
  readonly strict: RateLimiter;
  readonly controller: RateLimiter;
}

/** The application's limits, fresh for each platform. */
function limitsFor(): Limits {
  return { default: limiter(2), strict: limiter(1), controller: limiter(1) };
}

/**
 * A Nest application listening on 127.0.0.1 on `platform`, trusting X-Forwarded-For from
 * 127.0.0.1 only (or from anyone, with `trustEveryHop`).
 */
async function listen(platform: Platform, module: unknown, trustEveryHop = false): Promise<{ app: INestApplication; base: string }> {
  const moduleRef = await Test.createTestingModule({ imports: [module as never] }).compile();
  let app: INestApplication;
  if (platform === 'express') {
    const express = moduleRef.createNestApplication<NestExpressApplication>(new ExpressAdapter(), quiet);
    express.set('trust proxy', trustEveryHop ? true : 'loopback');
    app = express;
  } else {
    app = moduleRef.createNestApplication(new FastifyAdapter({ trustProxy: trustEveryHop ? true : '127.0.0.1' }), quiet);
  }
  await app.listen(0, '127.0.0.1');
  const { port } = (app.getHttpServer() as { address(): AddressInfo }).address();
  return { app, base: `http://127.0.0.1:${port}` };
}

// What every integration does (headers, the 429 and its problem body, keys, costs, groups of
// named limits, skip, the error path, onError, shadow mode, blocks, counting only failures, bad
// options) is checked for Nest on both platforms by the HTTP contract (contract/contract.test.ts);
// here, what is Nest's own: the decorators, the module's async options, exception filters, the
// default key behind a proxy, a response already sent, other transports.
describe.each<Platform>(['express', 'fastify'])('RateWardenModule and RateWardenGuard on @nestjs/platform-%s', (platform) => {
  let app: INestApplication;
  let base: string;
  let limits: Limits;

  beforeAll(async () => {
    limits = limitsFor();
    const options: RateWardenModuleOptions = {
      limits: { ...limits },
      defaultLimits: ['default'],
    };
    @Module({
      imports: [RateWardenModule.forRoot(options)],
      controllers: [RoutesController, ControllerLevel, SkippedController, FilteredController],
      providers: [{ provide: APP_GUARD, useClass: RateWardenGuard }],
    })
    class AppModule {}
    ({ app, base } = await listen(platform, AppModule));
  });

  afterAll(async () => {
    await app?.close();
  });

  /** A GET from `client` (the address the platform reports, through X-Forwarded-For). */
  const get = (path: string, client: string): Promise<Response> => fetch(`${base}${path}`, { headers: { 'x-forwarded-for': client } });

  it('applies the limit a route names with @RateLimit, and none to a route with @SkipRateLimit', async () => {
    now = 0;
    const client = '198.51.100.2';
    const strict = await get('/routes/strict', client);
    expect(strict.headers.get('ratelimit-policy')).toBe('"strict";q=1;w=60');
    expect((await get('/routes/strict', client)).status).toBe(429);
    expect(limits.strict.peekSync(client).remaining).toBe(0);
    expect(limits.default.peekSync(client).remaining).toBe(2); // the default limit is not this route's

    for (let i = 0; i < 5; i++) {
      const skipped = await get('/routes/skipped', client);
      expect(skipped.status).toBe(200);
      expect(skipped.headers.get('ratelimit')).toBeNull();
      expect(skipped.headers.get('ratelimit-policy')).toBeNull();
    }
  });

  it("applies a controller's @RateLimit to its routes; a route's own decorator overrides it", async () => {
    now = 0;
    const client = '198.51.100.3';
    const first = await get('/controller', client);
    expect(first.headers.get('ratelimit-policy')).toBe('"controller";q=1;w=60');
    expect((await get('/controller', client)).status).toBe(429);
    const override = await get('/controller/override', client);
    expect(override.status).toBe(200);
    expect(override.headers.get('ratelimit-policy')).toBe('"strict";q=1;w=60');
    expect(limits.controller.peekSync(client).remaining).toBe(0);
    expect(limits.strict.peekSync(client).remaining).toBe(0);
  });

  it("skips a controller with @SkipRateLimit(), and limits a route of it with @SkipRateLimit(false)", async () => {
    now = 0;
    const client = '198.51.100.4';
    for (let i = 0; i < 4; i++) expect((await get('/skipped', client)).headers.get('ratelimit')).toBeNull();
    expect(limits.default.peekSync(client).remaining).toBe(2);
    expect((await get('/skipped/limited', client)).headers.get('ratelimit')).toBe('"default";r=1;t=60');
    expect((await get('/skipped/limited', client)).status).toBe(200);
    expect((await get('/skipped/limited', client)).status).toBe(429);
  });

  it('keys by the client address, one IPv6 /64 network as one client', async () => {
    now = 0;
    expect((await get('/routes/strict', '2001:db8:5:6::1')).status).toBe(200);
    // Another address of the same /64, in another spelling: the same client.
    expect((await get('/routes/strict', '2001:DB8:5:6:0:0:0:ffff')).status).toBe(429);
    // Another /64: another client.
    expect((await get('/routes/strict', '2001:db8:5:7::1')).status).toBe(200);
    // An IPv4-mapped address counts as the IPv4 address.
    expect((await get('/routes/strict', '198.51.100.6')).status).toBe(200);
    expect((await get('/routes/strict', '::ffff:198.51.100.6')).status).toBe(429);
    expect(limits.strict.peekSync('2001:db8:5:6::/64').remaining).toBe(0);
  });

  it("hands the 429 to the application's exception filter, headers already set", async () => {
    now = 0;
    caught.length = 0;
    const client = '198.51.100.7';
    expect((await get('/filtered', client)).status).toBe(200);
    const refused = await get('/filtered', client);
    expect(refused.status).toBe(429);
    expect(await refused.json()).toEqual({ filtered: true, retryAfter: 60 });
    expect(refused.headers.get('retry-after')).toBe('60');
    expect(refused.headers.get('ratelimit')).toBe('"strict";r=0;t=60');
    expect(caught).toHaveLength(1);
    const exception = caught[0] as RateLimitExceededException;
    expect(exception).toBeInstanceOf(HttpException);
    expect(exception).toBeInstanceOf(RateLimitExceededException);
    expect(exception.getStatus()).toBe(429);
    expect(exception.message).toBe('Rate limit of 1 exceeded; retry in 60 s.');
    expect(exception.result).toMatchObject({ allowed: false, limit: 1, remaining: 0 });
  });

});

/** Settings of the application's own, injected into `forRootAsync`'s factory. */
const SETTINGS = Symbol('settings');

@Module({ providers: [{ provide: SETTINGS, useValue: { threshold: 1, legacy: true } }], exports: [SETTINGS] })
class SettingsModule {}

/** A request as both platforms have it: its headers. */
interface AnyRequest {
  readonly headers: Record<string, string | string[] | undefined>;
}

// Guarded per route.
@Controller('users')
class UsersController {
  @UseGuards(RateWardenGuard)
  @Get('a')
  a(): { ok: true } {
    return called('users.a');
  }

  @UseGuards(RateWardenGuard)
  @Get('b')
  b(): { ok: true } {
    return called('users.b');
  }
}

@UseGuards(RateWardenGuard)
@Controller('guarded')
class GuardedController {
  @Get()
  get(): { ok: true } {
    return called('guarded');
  }
}

@Controller('open')
class OpenController {
  @Get()
  get(): { ok: true } {
    return called('open');
  }
}

describe.each<Platform>(['express', 'fastify'])('RateWardenModule.forRootAsync and @UseGuards on @nestjs/platform-%s', (platform) => {
  let app: INestApplication;
  let base: string;
  let perUser: RateLimiter;
  const factoryArguments: unknown[] = [];

  beforeAll(async () => {
    @Module({
      imports: [
        RateWardenModule.forRootAsync<AnyRequest>({
          imports: [SettingsModule],
          inject: [SETTINGS],
          useFactory: async (settings: { threshold: number; legacy: boolean }) => {
            factoryArguments.push(settings);
            perUser = limiter(settings.threshold);
            return {
              limits: { perUser },
              legacyHeaders: settings.legacy,
              // One budget per user and per route (as @nestjs/throttler counts), from the context.
              key: (req, context) => `${context.getClass().name}.${context.getHandler().name}:${String(req.headers['x-user'])}`,
              skip: (req) => req.headers['x-internal'] === 'yes',
            };
          },
        }),
      ],
      // Guarded per controller: OpenController has no guard at all.
      controllers: [GuardedController, OpenController, UsersController],
    })
    class AsyncModule {}
    ({ app, base } = await listen(platform, AsyncModule));
  });

  afterAll(async () => {
    await app?.close();
  });

  const get = (path: string, headers: Record<string, string>): Promise<Response> => fetch(`${base}${path}`, { headers });

  it('builds the options with the injected providers, and guards the controllers that bind the guard', async () => {
    now = 0;
    expect(factoryArguments).toEqual([{ threshold: 1, legacy: true }]);
    const first = await get('/guarded', { 'x-user': 'ann' });
    expect(first.status).toBe(200);
    expect(first.headers.get('ratelimit-policy')).toBe('"perUser";q=1;w=60');
    expect(first.headers.get('x-ratelimit-limit')).toBe('1');
    expect(first.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(first.headers.get('x-ratelimit-reset')).toBe('60');
    const refused = await get('/guarded', { 'x-user': 'ann' });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
    expect((await get('/guarded', { 'x-user': 'bob' })).status).toBe(200);
    expect(perUser.peekSync('GuardedController.get:ann').remaining).toBe(0);

    // `skip` lets a request through untouched.
    const internal = await get('/guarded', { 'x-user': 'ann', 'x-internal': 'yes' });
    expect(internal.status).toBe(200);
    expect(internal.headers.get('ratelimit')).toBeNull();

    // No guard bound: no limit.
    for (let i = 0; i < 3; i++) expect((await get('/open', { 'x-user': 'ann' })).headers.get('ratelimit')).toBeNull();
  });

  it('passes the execution context to `key`: a budget per route when the key says so', async () => {
    now = 0;
    expect((await get('/users/a', { 'x-user': 'cid' })).status).toBe(200);
    expect((await get('/users/a', { 'x-user': 'cid' })).status).toBe(429);
    expect((await get('/users/b', { 'x-user': 'cid' })).status).toBe(200);
  });
});

/** What reached the application's catch-all filter, in the test of a response already sent. */
const reachedFilter: unknown[] = [];

/** Records every exception; answers (Express) only when nothing was sent yet. */
@Catch()
class CatchAll implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost): void {
    reachedFilter.push(exception);
    const express = host.switchToHttp().getResponse<{ headersSent: boolean; status(code: number): { send(body: unknown): unknown } }>();
    if (!express.headersSent) express.status(500).send({});
  }
}

@Controller('late')
class LateController {
  // Takes the response (`@Res()`), which a middleware has answered already: Nest sends nothing.
  @Get()
  get(@Res() _response: unknown): void {
    called('late');
  }
}

// On Express only: Fastify's middleware runner stops a request whose response has ended, so the
// guard never sees one there.
describe('a response already sent when the guard decides, on @nestjs/platform-express', () => {
  it('sets no header (Express would throw ERR_HTTP_HEADERS_SENT) and the decision stands', async () => {
    const late = new RateLimiter({ threshold: 1, windowSeconds: 60, clock });
    @Module({
      imports: [RateWardenModule.forRoot({ limits: { late }, key: () => 'everyone' })],
      controllers: [LateController],
      providers: [
        { provide: APP_GUARD, useClass: RateWardenGuard },
        { provide: APP_FILTER, useClass: CatchAll },
      ],
    })
    class LateModule {}
    const moduleRef = await Test.createTestingModule({ imports: [LateModule] }).compile();
    const app = moduleRef.createNestApplication<NestExpressApplication>(new ExpressAdapter(), quiet);
    // A middleware that answers, then lets the request go on (as a timeout middleware may).
    app.use((_req: unknown, res: { statusCode: number; end(body: string): void }, next: () => void) => {
      res.statusCode = 503;
      res.end('busy');
      next();
    });
    await app.listen(0, '127.0.0.1');
    try {
      now = 0;
      reachedFilter.length = 0;
      calls.delete('late');
      const { port } = (app.getHttpServer() as { address(): AddressInfo }).address();
      for (let i = 0; i < 2; i++) {
        const response = await fetch(`http://127.0.0.1:${port}/late`);
        expect(response.status).toBe(503);
        expect(await response.text()).toBe('busy');
        expect(response.headers.get('ratelimit')).toBeNull();
      }
      // Decided and recorded as usual: the first allowed, the second refused; only the refusal
      // reaches the filters, as its 429 exception.
      expect(late.stats()).toMatchObject({ allowed: 1, rejected: 1 });
      expect(reachedFilter).toHaveLength(1);
      expect(reachedFilter[0]).toBeInstanceOf(RateLimitExceededException);
      expect(calls.get('late')).toBe(1); // the allowed request reached the route, the refused one did not
    } finally {
      await app.close();
    }
  });
});

describe.each<Platform>(['express', 'fastify'])('the default key behind a proxy setting that trusts every hop, on @nestjs/platform-%s', (platform) => {
  const CODE = 'ERR_RATEWARDEN_PERMISSIVE_TRUST_PROXY';

  /** Two requests to an application trusting every hop; the warnings of ours they raised. */
  async function warningsOf(options: RateWardenModuleOptions<AnyRequest>): Promise<CapturedWarning[]> {
    @Controller('proxied')
    class ProxiedController {
      @Get()
      get(): { ok: true } {
        return called('proxied');
      }
    }
    @Module({
      imports: [RateWardenModule.forRoot(options)],
      controllers: [ProxiedController],
      providers: [{ provide: APP_GUARD, useClass: RateWardenGuard }],
    })
    class ProxiedModule {}
    const { warnings, restore } = captureWarnings(CODE);
    const { app, base } = await listen(platform, ProxiedModule, true);
    try {
      for (const client of ['198.51.100.10', '198.51.100.11']) {
        expect((await fetch(`${base}/proxied`, { headers: { 'x-forwarded-for': client } })).status).toBe(200);
      }
    } finally {
      restore();
      await app.close();
    }
    return warnings;
  }

  it('warns once, as the Express and Fastify middlewares do; not with a key of your own', async () => {
    const warnings = await warningsOf({ limits: { api: limiter(5) } });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.message).toContain(platform === 'express' ? "Express's `trust proxy` setting trusts every hop" : "Fastify's `trustProxy` option trusts every hop");
    expect(await warningsOf({ limits: { api: limiter(5) }, key: (req) => String(req.headers['x-api-key']) })).toHaveLength(0);
  });
});

describe('RateWardenModule: bad options fail the application at start-up, with clear errors', () => {
  /** Compiles a module importing `imported`, with `controllers`, and initialises the application. */
  async function start(imported: unknown, controllers: (new () => unknown)[] = []): Promise<void> {
    @Module({ imports: [imported as never], controllers })
    class Root {}
    const moduleRef = await Test.createTestingModule({ imports: [Root] }).compile();
    const app = moduleRef.createNestApplication(new ExpressAdapter(), quiet);
    try {
      await app.init();
    } finally {
      await app.close();
    }
  }

  const error = (type: 'TypeError' | 'RangeError', message: string, code?: string): unknown =>
    expect.objectContaining({
      name: type,
      code: code ?? (type === 'TypeError' ? 'ERR_RATEWARDEN_INVALID_TYPE' : 'ERR_RATEWARDEN_OUT_OF_RANGE'),
      message,
    });

  it('checks the options (forRoot)', async () => {
    await expect(start(RateWardenModule.forRoot({ limits: {} }))).rejects.toEqual(
      error('TypeError', 'Expected `limits` to be an object with at least one named limit, got `object` (object)'),
    );
    await expect(start(RateWardenModule.forRoot({ limits: { api: 5 as unknown as RateLimiter } }))).rejects.toEqual(
      error('TypeError', 'Expected `limits["api"]` to be a RateLimiter or { limiter: RateLimiter, key? }, got `5` (number)'),
    );
    await expect(start(RateWardenModule.forRoot({ limits: { api: limiter(1) }, key: () => 'k', ipv6Subnet: 48 }))).rejects.toEqual(
      error(
        'TypeError',
        'Expected `ipv6Subnet` to be undefined when `key` is given (it shapes the default key only; call `ipKey(address, { ipv6Subnet })` in your `key`), got `48` (number)',
      ),
    );
    await expect(start(RateWardenModule.forRoot({ limits: { api: limiter(1) }, ipv6Subnet: 129 }))).rejects.toEqual(
      error('RangeError', 'Expected `ipv6Subnet` to be an integer prefix length from 1 to 128, or false, got `129` (number)'),
    );
    await expect(start(RateWardenModule.forRoot({ limits: { 'per-sécond': limiter(1) } }))).rejects.toBeInstanceOf(RangeError);
    await expect(start(RateWardenModule.forRoot({ limits: { api: limiter(1) }, defaultLimits: ['apu'] }))).rejects.toEqual(
      error('TypeError', 'Expected `defaultLimits` to be names of `limits` ("api"), got `"apu"` (string)'),
    );
  });

  it('checks what the forRootAsync factory returns, and forRootAsync options at once', async () => {
    await expect(start(RateWardenModule.forRootAsync({ useFactory: () => ({ limits: { api: limiter(1) }, legacyHeaders: 'yes' as unknown as boolean }) }))).rejects.toEqual(
      error('TypeError', 'Expected `legacyHeaders` to be a boolean or undefined, got `"yes"` (string)'),
    );
    expect(() => RateWardenModule.forRootAsync({ useFactory: undefined as never })).toThrow(
      error('TypeError', 'Expected `useFactory` to be a function returning the options, got `undefined` (undefined)'),
    );
    expect(() => RateWardenModule.forRootAsync({ useFactory: () => ({ limits: {} }), useClass: Object } as never)).toThrow(TypeError);
  });

  it('checks every @RateLimit name when the application starts, naming the route', async () => {
    @Controller('typo')
    class TypoController {
      @RateLimit('strikt')
      @Get()
      get(): { ok: true } {
        return called('typo');
      }
    }
    await expect(start(RateWardenModule.forRoot({ limits: { strict: limiter(1), default: limiter(1) } }), [TypoController])).rejects.toEqual(
      error('TypeError', 'Expected `@RateLimit() of TypoController.get` to be names of `limits` ("strict", "default"), got `"strikt"` (string)'),
    );

    @RateLimit('nope')
    @Controller('typo-class')
    class TypoClass {}
    await expect(start(RateWardenModule.forRoot({ limits: { strict: limiter(1) } }), [TypoClass])).rejects.toEqual(
      error('TypeError', 'Expected `@RateLimit() of TypoClass` to be names of `limits` ("strict"), got `"nope"` (string)'),
    );
  });

  it('checks the decorators’ arguments when they are applied', () => {
    expect(() => RateLimit()).toThrow(error('TypeError', 'Expected `@RateLimit() names` to be a non-empty array of limit names, got `array` (object)'));
    expect(() => RateLimit('a', 'a')).toThrow(error('TypeError', 'Expected `@RateLimit() names[1]` to be a name not listed before, got `"a"` (string)'));
    expect(() => RateLimit(1 as unknown as string)).toThrow(TypeError);
    expect(() => SkipRateLimit('yes' as unknown as boolean)).toThrow(
      error('TypeError', 'Expected `@SkipRateLimit() skip` to be a boolean or undefined, got `"yes"` (string)'),
    );
  });
});

describe('requests of other transports', () => {
  it('go on undecided: a microservice or WebSocket context records nothing and sets nothing', async () => {
    const other = limiter(1);
    const moduleRef = await Test.createTestingModule({
      imports: [RateWardenModule.forRoot({ limits: { other }, key: () => 'everyone' })],
    }).compile();
    const guard = moduleRef.get(RateWardenGuard);
    for (const type of ['rpc', 'ws', 'graphql']) {
      // Only getType is read before the guard lets such a request go on; any other call would throw.
      const context = new Proxy(
        { getType: () => type },
        {
          get(target, property) {
            if (property === 'getType') return target.getType;
            throw new Error(`read ${String(property)}`);
          },
        },
      ) as unknown as ExecutionContext;
      expect(await guard.canActivate(context)).toBe(true);
    }
    expect(other.stats()).toMatchObject({ allowed: 0, rejected: 0 });
    await moduleRef.close();
  });
});
