import { defineConfig } from 'vitest/config';

// Three projects, over the library's tests (test/) and the CLI's (packages/cli/test/):
// - unit: needs no external service (no redis-server, no browser, no HTTP server of a framework);
//   `npm run test:unit` runs it alone.
// - integration: the tests against real services, where Redis is not the subject: HTTP servers
//   of Express, Fastify, NestJS, Hono and the Fetch API on 127.0.0.1, Bun, Deno and workerd,
//   headless Chromium (the library's ESM bundle, and the CLI's HTML report: packages/cli/test/integration/), and the README's blocks and examples. Several start a redis-server of
//   their own all the same: the HTTP contract (a stopped one, for store failures), the
//   middleware's store-failure test (one killed and restarted), the runtimes test (behind the
//   Upstash fronts), the login recipe, and the README's Redis blocks. None checks how closely
//   the strategies keep their timeouts in real time, which is what sets the next project apart.
// - redis: test/integration/redis/, against real redis-servers (standalone, cluster, several
//   processes, proxies that delay, hang or drop). Many of these hold the library to promises in
//   real time, which only Redis's own clock (TIME) can test: a decision reported failed after
//   its timeout was never recorded, a timeout never ends later than it says. A busy CPU delays
//   timers and replies alike, so these files run after the others, one at a time
//   (`sequence.groupOrder`), on a machine the other tests have left idle.
// unit and integration run first, in parallel, MAX_WORKERS files at a time: most of their time is
// spent waiting on child processes and sockets, not computing, so on this project's 2-core
// machines two workers halve their time (vitest's default there is one). `npm test` (the README's
// command) runs all three.
const MAX_WORKERS = 2;

export default defineConfig({
  test: {
    environment: 'node',
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['test/unit/**/*.test.ts', 'packages/cli/test/**/*.test.ts'], exclude: ['packages/cli/test/integration/**'], maxWorkers: MAX_WORKERS },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts', 'packages/cli/test/integration/**/*.test.ts'],
          exclude: ['test/integration/redis/**'],
          maxWorkers: MAX_WORKERS,
        },
      },
      {
        extends: true,
        test: { name: 'redis', include: ['test/integration/redis/**/*.test.ts'], maxWorkers: 1, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
