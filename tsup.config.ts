import { defineConfig } from 'tsup';

export default defineConfig({
  // The library: dual ESM/CJS with declarations, no runtime dependencies. `ratewarden/redis`
  // shares the core's chunks (one RateLimiter class, one set of errors) in both formats, and so
  // do the framework middleware `ratewarden/express`, `/fastify`, `/fetch` and `/hono`
  // (frameworks are imported for their types only: optional peer dependencies, never bundled or
  // required).
  entry: {
    index: 'src/index.ts',
    redis: 'src/redis/index.ts',
    express: 'src/middleware/express.ts',
    fastify: 'src/middleware/fastify.ts',
    fetch: 'src/middleware/fetch.ts',
    hono: 'src/middleware/hono.ts',
    nestjs: 'src/nestjs/index.ts',
  },
  format: ['esm', 'cjs'],
  splitting: true,
  // Declarations without the members marked @internal (not part of the public API).
  dts: { compilerOptions: { stripInternal: true } },
  clean: true,
  sourcemap: true,
  target: 'es2022',
  platform: 'neutral',
});
