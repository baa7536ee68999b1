// @ts-check
// Mutation testing (StrykerJS): `npm run test:mutation` (tens of minutes; not part of CI).
// See docs/mutation.md for how to run it on a few files, the scores and the surviving mutants
// judged equivalent.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  plugins: ['@stryker-mutator/vitest-runner'],
  // The unit project only (test/unit/**: no redis-server, no browser, no HTTP server).
  vitest: { configFile: 'vitest.mutation.config.ts' },
  mutate: [
    'src/keyed-mutex.ts',
    'src/result.ts',
    'src/rate-limiter.ts',
    'src/key-table.ts',
    'src/decider.ts',
    'src/wait-queue.ts',
    'src/observer.ts',
    'src/clock.ts',
    'src/tiers.ts',
    'src/request.ts',
    'src/quota.ts',
    'src/http-headers.ts',
    'src/strategies/**/*.ts',
  ],
  // Only the tests that cover a mutant run against it.
  coverageAnalysis: 'perTest',
  // One test runner: the machines have 2 cores (and the script runs under `nice`).
  concurrency: 1,
  // A mutant that makes a test loop (a wait that never ends) is a timeout, counted as detected.
  timeoutMS: 10000,
  // `npm run test:mutation -- --incremental` reruns only the mutants whose code or tests changed.
  incrementalFile: 'reports/mutation/stryker-incremental.json',
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  tempDirName: '.stryker-tmp',
  cleanTempDir: true,
};
