// NestJS: a limit per client on every route (here 100 per minute); the login route takes two
// limits of its own instead (2 per minute, so that the demo below reaches it, and 20 per hour),
// decided together, all or nothing. A refused request gets a 429 HttpException (an RFC 9457
// problem body) that your exception filters see, with the RateLimit headers and Retry-After. The
// same module works on the Fastify platform: NestFactory.create(AppModule, new FastifyAdapter()).
import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import { Controller, Get, Module, Post } from '@nestjs/common';
import { APP_GUARD, NestFactory } from '@nestjs/core';
import { RateLimiter } from 'ratewarden';
import { RateLimit, RateWardenGuard, RateWardenModule, SkipRateLimit } from 'ratewarden/nestjs';

@Controller()
class AppController {
  @Get('hello')
  hello() {
    return { hello: 'world' };
  }

  @SkipRateLimit() // health checks are never limited
  @Get('health')
  health() {
    return 'ok';
  }

  @RateLimit('login', 'loginHourly') // these two instead of the default limit
  @Post('login')
  login() {
    return { signedIn: true };
  }
}

// One key per client address (req.ip; an IPv6 client's /64 network): sweep idle keys every
// minute to bound memory.
const limits = {
  default: new RateLimiter({ threshold: 100, windowSeconds: 60, sweepIntervalSeconds: 60 }),
  login: new RateLimiter({ threshold: 2, windowSeconds: 60, sweepIntervalSeconds: 60 }),
  loginHourly: new RateLimiter({ threshold: 20, windowSeconds: 3600, sweepIntervalSeconds: 60 }),
};

@Module({
  imports: [RateWardenModule.forRoot({ limits, defaultLimits: ['default'] })], // defaultLimits: routes without @RateLimit
  controllers: [AppController],
  // Every route of the application; or @UseGuards(RateWardenGuard) on a controller or route.
  providers: [{ provide: APP_GUARD, useClass: RateWardenGuard }],
})
class AppModule {}

// Behind a reverse proxy, req.ip is the proxy's address (every client would share one limit)
// until the platform trusts it: app.set('trust proxy', '10.0.0.5') on a NestExpressApplication,
// new FastifyAdapter({ trustProxy: '10.0.0.5' }) on Fastify, with the addresses of the proxies
// you run. Never without such a proxy in front (and never `true`): any client could then forge
// X-Forwarded-For and get a fresh limit per request.
const app = await NestFactory.create(AppModule, { logger: false }); // Nest's log off for the demo

// The demo: listen on a free port of 127.0.0.1; one GET, three sign-ins (the third is refused),
// and the health check, which is not limited.
await app.listen(0, '127.0.0.1');
const { port } = (app.getHttpServer() as { address(): AddressInfo }).address();
const requests: [string, string][] = [
  ['GET', '/hello'],
  ['POST', '/login'],
  ['POST', '/login'],
  ['POST', '/login'],
  ['GET', '/health'],
];
for (const [method, path] of requests) {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, { method });
  console.log(`${method} ${path} → ${response.status} ${await response.text()}`);
  for (const name of ['RateLimit-Policy', 'RateLimit', 'Retry-After']) {
    if (response.headers.has(name)) console.log(`  ${name}: ${response.headers.get(name)}`);
  }
}
await app.close();
for (const limiter of Object.values(limits)) limiter.close();
