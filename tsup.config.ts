import { defineConfig } from 'tsup';

export default defineConfig([
  {
    // The library: dual ESM/CJS with declarations, no runtime dependencies. `ratewarden/redis`
    // shares the core's chunks (one RateLimiter class, one set of errors) in both formats, and so
    // do the framework middleware `ratewarden/express`, `/fastify` and `/fetch` (frameworks are
    // imported for their types only: optional peer dependencies, never bundled or required).
    entry: {
      index: 'src/index.ts',
      redis: 'src/redis/index.ts',
      express: 'src/middleware/express.ts',
      fastify: 'src/middleware/fastify.ts',
      fetch: 'src/middleware/fetch.ts',
      nestjs: 'src/nestjs/index.ts',
    },
    format: ['esm', 'cjs'],
    splitting: true,
    external: ['node:crypto'],
    // Declarations without the members marked @internal (not part of the public API).
    dts: { compilerOptions: { stripInternal: true } },
    clean: true,
    sourcemap: true,
    target: 'es2022',
    platform: 'neutral',
  },
  {
    // The command-line tool: ESM only, Node APIs allowed.
    entry: { cli: 'src/cli/main.ts' },
    format: ['esm'],
    dts: false,
    sourcemap: true,
    target: 'node20',
    platform: 'node',
    banner: { js: '#!/usr/bin/env node' },
  },
]);
