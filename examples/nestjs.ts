// NestJS: 100 requests per minute per client on every route; the login route takes two limits of
// its own instead (5 per minute and 20 per hour), decided together, all or nothing. A refused
// request gets a 429 HttpException (an RFC 9457 problem body) that your exception filters see,
// with the RateLimit headers and Retry-After. The same module works on the Fastify platform:
// NestFactory.create(AppModule, new FastifyAdapter()).
import 'reflect-metadata';
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

@Module({
  imports: [
    RateWardenModule.forRoot({
      // One key per client address (req.ip; an IPv6 client's /64 network): sweep idle keys
      // every minute to bound memory.
      limits: {
        default: new RateLimiter({ threshold: 100, windowSeconds: 60, sweepIntervalSeconds: 60 }),
        login: new RateLimiter({ threshold: 5, windowSeconds: 60, sweepIntervalSeconds: 60 }),
        loginHourly: new RateLimiter({ threshold: 20, windowSeconds: 3600, sweepIntervalSeconds: 60 }),
      },
      defaultLimits: ['default'], // routes without @RateLimit
    }),
  ],
  controllers: [AppController],
  // Every route of the application; or @UseGuards(RateWardenGuard) on a controller or route.
  providers: [{ provide: APP_GUARD, useClass: RateWardenGuard }],
})
class AppModule {}

const app = await NestFactory.create(AppModule);
// Behind a reverse proxy you run, req.ip is the proxy's address (every client would share one
// limit) until the platform trusts it: app.set('trust proxy', 1) on a NestExpressApplication,
// new FastifyAdapter({ trustProxy: '10.0.0.0/8' }) on Fastify. Without a proxy in front, trust
// none: any client could then forge X-Forwarded-For to escape the limit.
await app.listen(3000);
