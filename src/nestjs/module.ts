/**
 * `RateWardenModule`: registers the options (`forRoot`, `forRootAsync`), compiles them once,
 * provides `RateWardenGuard`, and checks at start-up that every `@RateLimit(...)` of every
 * controller names limits the module has.
 *
 * @module
 */
import {
  Inject,
  Module,
  type DynamicModule,
  type InjectionToken,
  type ModuleMetadata,
  type OnModuleInit,
  type OptionalFactoryDependency,
  type Provider,
} from '@nestjs/common';
import { DiscoveryModule, DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { checkKnownKeys, checkObject, knownOptions, typeError } from '../errors.js';
import { LIMITS_METADATA } from './decorators.js';
import { RateWardenGuard } from './guard.js';
import { compileOptions, type CompiledOptions, type RateWardenModuleOptions } from './options.js';
import { RATEWARDEN_COMPILED, RATEWARDEN_OPTIONS } from './tokens.js';

/**
 * Options of {@link RateWardenModule.forRootAsync}: the options built by a factory with
 * injected dependencies (a `ConfigService`, a Redis client for `ratewarden/redis` strategies).
 * Any other key is rejected.
 *
 * @typeParam Req - the platform's request type of the options' functions.
 * @typeParam Res - the platform's response type of `requestWasSuccessful`.
 */
export interface RateWardenModuleAsyncOptions<Req = unknown, Res = unknown> {
  /** Modules whose exported providers `inject` names (`ConfigModule`). */
  readonly imports?: ModuleMetadata['imports'];
  /** The providers passed to `useFactory`, in order. @default none */
  readonly inject?: readonly (InjectionToken | OptionalFactoryDependency)[];
  /**
   * Returns the module's options (or a promise of them), called once when the application
   * starts; what it returns is checked as `forRoot`'s options are.
   */
  // Nest passes the injected values untyped, as its own factories declare them.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly useFactory: (...args: any[]) => RateWardenModuleOptions<Req, Res> | Promise<RateWardenModuleOptions<Req, Res>>;
}

/** The keys of {@link RateWardenModuleAsyncOptions}: any other is rejected. */
const ASYNC_OPTIONS = knownOptions('RateWardenModule.forRootAsync options', {
  imports: true,
  inject: true,
  useFactory: true,
} satisfies Record<keyof RateWardenModuleAsyncOptions, true>);

/**
 * The Nest module of ratewarden: import it once, in the root module, with
 * {@link RateWardenModule.forRoot} or {@link RateWardenModule.forRootAsync}; it is global, so
 * `RateWardenGuard` can be bound anywhere (`APP_GUARD`, `@UseGuards(RateWardenGuard)`).
 *
 * The options are checked when the application starts: bad options make `NestFactory.create`
 * (or a testing module's `compile()`) throw the library's `RateWardenTypeError` or
 * `RateWardenRangeError`, naming the option; a `@RateLimit` naming a limit the module does not
 * have makes `app.init()` (or `listen()`) throw, naming the route.
 *
 * @example
 * ```ts
 * @Module({
 *   imports: [RateWardenModule.forRoot({ limits: { default: new RateLimiter({ threshold: 100, windowSeconds: 60 }) } })],
 *   providers: [{ provide: APP_GUARD, useClass: RateWardenGuard }],
 * })
 * export class AppModule {}
 * ```
 */
@Module({})
export class RateWardenModule implements OnModuleInit {
  readonly #discovery: DiscoveryService;
  readonly #scanner: MetadataScanner;
  readonly #reflector: Reflector;
  readonly #compiled: CompiledOptions;

  /**
   * @internal Built by Nest's injector (its parameters are internal), not called directly.
   * @param discovery - finds every controller, to check their `@RateLimit` names.
   * @param scanner - lists a controller's methods.
   * @param reflector - reads the metadata.
   * @param compiled - the compiled options.
   */
  constructor(
    @Inject(DiscoveryService) discovery: DiscoveryService,
    @Inject(MetadataScanner) scanner: MetadataScanner,
    @Inject(Reflector) reflector: Reflector,
    @Inject(RATEWARDEN_COMPILED) compiled: CompiledOptions,
  ) {
    this.#discovery = discovery;
    this.#scanner = scanner;
    this.#reflector = reflector;
    this.#compiled = compiled;
  }

  /**
   * Registers the module with options known when the module is defined.
   * @param options - {@link RateWardenModuleOptions}; `limits` is required. Checked when the
   *   application starts (see the class).
   * @returns a global dynamic module providing `RateWardenGuard` and {@link RATEWARDEN_OPTIONS}.
   */
  static forRoot<Req = unknown, Res = unknown>(options: RateWardenModuleOptions<Req, Res>): DynamicModule {
    return defineModule([], { provide: RATEWARDEN_OPTIONS, useValue: options });
  }

  /**
   * Registers the module with options built by a factory, with injected dependencies.
   * @param options - {@link RateWardenModuleAsyncOptions}.
   * @returns a global dynamic module providing `RateWardenGuard` and {@link RATEWARDEN_OPTIONS}.
   * @throws {RateWardenTypeError} (at once) when `options` is not an object, has a key other than
   *   `imports`, `inject` and `useFactory` (code `ERR_RATEWARDEN_UNKNOWN_OPTION`), `useFactory` is
   *   not a function, or `imports` or `inject` is not an array.
   */
  static forRootAsync<Req = unknown, Res = unknown>(options: RateWardenModuleAsyncOptions<Req, Res>): DynamicModule {
    checkObject('options', options, 'an object with a `useFactory`');
    checkKnownKeys(options, ASYNC_OPTIONS);
    const { imports = [], useFactory } = options;
    if (typeof useFactory !== 'function') throw typeError('useFactory', 'a function returning the options', useFactory);
    if (!isList(imports)) throw typeError('imports', 'an array of modules or undefined', imports);
    if (options.inject !== undefined && !isList(options.inject)) {
      throw typeError('inject', 'an array of injection tokens or undefined', options.inject);
    }
    return defineModule(imports, { provide: RATEWARDEN_OPTIONS, useFactory, inject: [...(options.inject ?? [])] });
  }

  /**
   * Checks the names of every `@RateLimit(...)` of every controller, on classes and routes.
   * @throws {RateWardenTypeError} naming the route (or controller) and the unknown name.
   */
  onModuleInit(): void {
    for (const wrapper of this.#discovery.getControllers()) {
      const controller = wrapper.metatype as (abstract new (...args: never[]) => unknown) | null | undefined;
      if (typeof controller !== 'function') continue;
      const own = this.#reflector.get<readonly string[] | undefined>(LIMITS_METADATA, controller);
      if (own !== undefined) this.#compiled.checkNames(own, `@RateLimit() of ${controller.name}`);
      const prototype = controller.prototype as Record<string, unknown>;
      for (const method of this.#scanner.getAllMethodNames(prototype)) {
        const handler = prototype[method];
        if (typeof handler !== 'function') continue;
        const names = this.#reflector.get<readonly string[] | undefined>(LIMITS_METADATA, handler);
        if (names !== undefined) this.#compiled.checkNames(names, `@RateLimit() of ${controller.name}.${method}`);
      }
    }
  }
}

/** Whether `value` is an array (without narrowing a typed array to `any[]`, as `Array.isArray` does). */
function isList(value: unknown): boolean {
  return Array.isArray(value);
}

/** The dynamic module: the options provider, their compiled form, the guard. */
function defineModule(imports: NonNullable<ModuleMetadata['imports']>, options: Provider): DynamicModule {
  return {
    module: RateWardenModule,
    global: true,
    imports: [...imports, DiscoveryModule],
    providers: [
      options,
      { provide: RATEWARDEN_COMPILED, useFactory: compileOptions, inject: [RATEWARDEN_OPTIONS] },
      RateWardenGuard,
    ],
    exports: [RATEWARDEN_OPTIONS, RATEWARDEN_COMPILED, RateWardenGuard],
  };
}
