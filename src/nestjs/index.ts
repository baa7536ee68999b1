/**
 * `ratewarden/nestjs`: rate limiting for NestJS (on `@nestjs/platform-express` or
 * `@nestjs/platform-fastify`): a module, a guard, and decorators to choose or skip the limits of
 * a route or a controller.
 *
 * `@nestjs/common` and `@nestjs/core` are optional peer dependencies of `ratewarden`, imported
 * by this subpath only; the core (`ratewarden`) never imports Nest.
 *
 * @example
 * ```ts
 * import { Module } from '@nestjs/common';
 * import { APP_GUARD } from '@nestjs/core';
 * import { RateLimiter } from 'ratewarden';
 * import { RateWardenGuard, RateWardenModule } from 'ratewarden/nestjs';
 *
 * @Module({
 *   imports: [RateWardenModule.forRoot({ limits: { default: new RateLimiter({ threshold: 100, windowSeconds: 60 }) } })],
 *   providers: [{ provide: APP_GUARD, useClass: RateWardenGuard }],
 * })
 * export class AppModule {}
 * ```
 *
 * @module ratewarden/nestjs
 */
export { RateWardenModule } from './module.js';
export type { RateWardenModuleAsyncOptions } from './module.js';
export { RateWardenGuard } from './guard.js';
export { RateLimit, SkipRateLimit } from './decorators.js';
export type { RouteOrControllerDecorator } from './decorators.js';
export { RateLimitExceededException } from './exception.js';
export { RATEWARDEN_OPTIONS } from './tokens.js';
export type { RateWardenLimit, RateWardenModuleOptions } from './options.js';
export { HeaderNames } from '../middleware/common.js';
export { ipKey } from '../ip-key.js';
export type { IpKeyOptions } from '../ip-key.js';
export type { ClientAddressKeyOptions } from '../middleware/common.js';
export type { RateLimitPolicy, RateLimitProblem } from '../http-headers.js';
