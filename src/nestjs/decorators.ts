/**
 * The route and controller decorators of `ratewarden/nestjs`: `@RateLimit(...names)` chooses
 * the named limits that apply, `@SkipRateLimit()` lets requests through untouched. Both only
 * store metadata (Nest's `SetMetadata`), read by `RateWardenGuard` through Nest's `Reflector`;
 * a route's own decorator overrides its controller's.
 *
 * @module
 */
import { SetMetadata } from '@nestjs/common';
import { typeError } from '../errors.js';
import { checkNameList } from './options.js';

/** @internal Metadata key of `@RateLimit`: the list of limit names. */
export const LIMITS_METADATA = 'ratewarden:limits';
/** @internal Metadata key of `@SkipRateLimit`: a boolean. */
export const SKIP_METADATA = 'ratewarden:skip';

/** What a Nest decorator for a class or a method is (Nest's `CustomDecorator`, without its key). */
export type RouteOrControllerDecorator = MethodDecorator & ClassDecorator;

/**
 * Chooses the limits of a route (on a method) or of every route of a controller (on the class):
 * the named limits of `RateWardenModule`'s `limits`, decided together as one `RateLimitGroup`,
 * all or nothing (refused by one, the request is recorded by none). The route's own
 * `@RateLimit` overrides its controller's; without either, the module's `defaultLimits` apply.
 *
 * The names are checked when the application starts (`app.init()` or `listen()` throws for a
 * name that is not a limit of the module).
 *
 * @example
 * ```ts
 * @Controller('auth')
 * export class AuthController {
 *   @RateLimit('login') // only the "login" limit here
 *   @Post('login')
 *   login() {}
 * }
 * ```
 *
 * @param names - one or more names of `limits`, each once; their order is the headers' order.
 * @throws {RateWardenTypeError} (when the decorator is applied) when no name is given, a name is
 *   not a string, or a name is given twice.
 */
export function RateLimit(...names: string[]): RouteOrControllerDecorator {
  return SetMetadata(LIMITS_METADATA, checkNameList('@RateLimit() names', names));
}

/**
 * Lets the requests of a route (on a method) or of every route of a controller (on the class)
 * through untouched: no decision, no rate-limit headers. `@SkipRateLimit(false)` on a route
 * limits it again inside a skipped controller.
 *
 * @param skip - whether to skip. @default true
 * @throws {RateWardenTypeError} (when the decorator is applied) when `skip` is not a boolean.
 */
export function SkipRateLimit(skip = true): RouteOrControllerDecorator {
  if (typeof skip !== 'boolean') throw typeError('@SkipRateLimit() skip', 'a boolean or undefined', skip);
  return SetMetadata(SKIP_METADATA, skip);
}
