import { defineConfig } from 'vitest/config';

// Two projects, mirroring the two kinds of test:
// - unit: needs no external service (no redis-server, no browser, no HTTP server of a framework);
//   `npm run test:unit` runs it alone.
// - integration: the tests against real services: redis-server (standalone, cluster, several
//   processes), HTTP servers of Express, Fastify and the Fetch API on 127.0.0.1, headless
//   Chromium, and the README's blocks (one of which talks to Redis).
// `npm test` (the README's command) runs both.
export default defineConfig({
  test: {
    environment: 'node',
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts'] } },
      { extends: true, test: { name: 'integration', include: ['test/integration/**/*.test.ts'] } },
    ],
  },
});
