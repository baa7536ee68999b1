/**
 * The injection tokens of `ratewarden/nestjs`.
 *
 * @module
 */

/**
 * The injection token of the module's options, as given to `forRoot` or returned by
 * `forRootAsync`'s `useFactory` (a `RateWardenModuleOptions`).
 */
export const RATEWARDEN_OPTIONS = Symbol('ratewarden:options');

/** @internal The injection token of the compiled options (`CompiledOptions`), which the guard uses. */
export const RATEWARDEN_COMPILED = Symbol('ratewarden:compiled');
