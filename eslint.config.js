// ESLint (flat config): `npm run lint` builds first (see the examples block) and fails on any
// warning (--max-warnings=0).
//
// TypeScript is linted with type information: typescript-eslint's strict and stylistic
// type-checked presets, minus the rules our house style contradicts (each with its reason below).
// The plain JavaScript of bench/, docs/ and test/fixtures/ gets ESLint's recommended rules, without
// type information.
import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default defineConfig(
  globalIgnores(['dist/', 'packages/*/dist/', 'coverage/', 'docs/api/', 'reports/', '.stryker-tmp/']),

  {
    linterOptions: {
      // A disable comment that disables nothing is an error, not a warning to get used to.
      reportUnusedDisableDirectives: 'error',
      reportUnusedInlineConfigs: 'error',
    },
  },

  // Plain JavaScript run by Node: the scripts, the plot and the test fixtures (and this file).
  {
    files: ['**/*.{js,mjs}'],
    ignores: ['test/runtimes/**'],
    extends: [js.configs.recommended],
    languageOptions: { globals: globals.node },
    rules: {
      // Relaxed like tsc: `({ shown, ...rest }) => rest` is the idiom for leaving a property out.
      'no-unused-vars': ['error', { ignoreRestSiblings: true }],
      // Added: `==` only for `== null` (null or undefined).
      eqeqeq: ['error', 'always', { null: 'ignore' }],
    },
  },

  // The runtime checks (test/runtimes/): run by Node.js, Bun, Deno and workerd, so only what a
  // Worker has is global (fetch, Request, Response, navigator...: a service worker's globals); the
  // APIs of Node.js, Bun and Deno are reached through globalThis, after checking they are there.
  {
    files: ['test/runtimes/**/*.mjs'],
    extends: [js.configs.recommended],
    languageOptions: { globals: globals.serviceworker },
    rules: {
      'no-unused-vars': ['error', { ignoreRestSiblings: true }],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
    },
  },

  // TypeScript, type-checked by the project that compiles it (tsconfig.json: src, test, configs, and
  // the CLI's packages/cli/src and packages/cli/test).
  {
    files: ['src/**/*.ts', 'test/**/*.ts', 'packages/cli/src/**/*.ts', 'packages/cli/test/**/*.ts', 'packages/cli/tsup.config.ts', 'examples/*.ts', 'examples/login/*.ts', 'tsup.config.ts', 'vitest.config.ts', 'vitest.mutation.config.ts'],
    extends: [js.configs.recommended, tseslint.configs.strictTypeChecked, tseslint.configs.stylisticTypeChecked],
    languageOptions: {
      parserOptions: { project: './tsconfig.json', tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // Numbers and booleans read fine in messages; nullish, objects and `any` stay errors.
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
      // Off: under noUncheckedIndexedAccess the house idiom for a checked read is `a[i] as number`.
      '@typescript-eslint/non-nullable-type-assertion-style': 'off',
      // Off: `a[i]!++` after a bounds check is the only assertion that works as an increment target.
      '@typescript-eslint/no-non-null-assertion': 'off',
      // Off: `RateLimitStrategy<unknown>` says on purpose that the state type is erased.
      '@typescript-eslint/no-unnecessary-type-arguments': 'off',
      // Off: our empty functions are deliberate no-ops (silent progress, swallowed rejections, fakes).
      '@typescript-eslint/no-empty-function': 'off',
      // Relaxed: `() => server.close()` is fine; void values inside other expressions stay errors.
      '@typescript-eslint/no-confusing-void-expression': ['error', { ignoreArrowShorthand: true }],
      // Relaxed: passing on a caught `unknown` or an AbortSignal's `reason` as a rejection is correct.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingAny: true, allowThrowingUnknown: true }],
      // Relaxed: `x === undefined ? d : x` defaults only undefined; `??` would accept a JS caller's
      // null, which our option checks must reject with a TypeError (and the tests say so).
      '@typescript-eslint/prefer-nullish-coalescing': ['error', { ignoreTernaryTests: true, ignoreIfStatements: true }],
      // Relaxed like tsc: `_next` keeps an Express error handler's arity; `{ a, ...rest }` omits `a`.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', ignoreRestSiblings: true }],
      // Added: `==` only for `== null` (null or undefined).
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      // Relaxed: Nest's modules are empty classes that carry their metadata in a decorator.
      '@typescript-eslint/no-extraneous-class': ['error', { allowWithDecorator: true }],
      // Added: a switch over a union (strategy names, failure policies) must handle every member.
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
    },
  },

  // Tests: fakes, fixtures and vitest idioms.
  {
    files: ['test/**/*.ts', 'packages/cli/test/**/*.ts'],
    rules: {
      // Off: fakes implement Promise-returning interfaces with `async` methods that need no await.
      '@typescript-eslint/require-await': 'off',
      // Off: `afterAll(() => server?.close())` guards against a beforeAll that failed, which the
      // `let server: Server` declaration cannot express.
      '@typescript-eslint/no-unnecessary-condition': 'off',
      // Off: vitest's asymmetric matchers (expect.stringContaining(), expect.any()) are typed `any`.
      '@typescript-eslint/no-unsafe-assignment': 'off',
      // Off: `const name: string = 'ratewarden/x'` keeps a dynamic import of dist/ out of tsc's reach.
      '@typescript-eslint/no-inferrable-types': 'off',
    },
  },

  // The examples and the README's fake-timers test import the BUILT package ('ratewarden',
  // 'ratewarden/express', ...), as a user would: they are type-checked by tsconfig.examples.json
  // against dist/*.d.ts, which is why `npm run lint` runs the build first.
  {
    files: ['examples/*.ts', 'examples/login/*.ts', 'test/unit/readme-fake-timers-example.test.ts'],
    languageOptions: {
      parserOptions: { project: './tsconfig.examples.json', tsconfigRootDir: import.meta.dirname },
    },
  },
  {
    // Nest declares its application options as a class (NestApplicationContextOptions) that every
    // caller, its own documentation included, passes as an object literal.
    files: ['examples/nestjs.ts', 'test/integration/middleware/nestjs.test.ts'],
    rules: { '@typescript-eslint/no-unsafe-class-instance-assignment': 'off' },
  },
  {
    files: ['examples/*.ts'],
    rules: {
      // Off: `async` route and fetch handlers without await are the frameworks' own idiom.
      '@typescript-eslint/require-await': 'off',
    },
  },
);
