import { writeFileSync } from 'node:fs';
import { defineConfig } from 'tsup';

/**
 * The library's entry points: `ratewarden`, and the subpaths `ratewarden/redis`, the framework
 * middleware `ratewarden/express`, `/fastify`, `/fetch`, `/hono`, and `ratewarden/nestjs`.
 */
const ENTRY = {
  index: 'src/index.ts',
  redis: 'src/redis/index.ts',
  express: 'src/middleware/express.ts',
  fastify: 'src/middleware/fastify.ts',
  fetch: 'src/middleware/fetch.ts',
  hono: 'src/middleware/hono.ts',
  nestjs: 'src/nestjs/index.ts',
};

/**
 * The ESM entry points' declarations, one line each: `dist/index.d.ts` re-exports
 * `dist/index.d.cts`. The declarations, with all their documentation, are written once, for the
 * CommonJS build (the second config), instead of once per format: about 250 kB less in the
 * package. An ES module may import a CommonJS one, so every `moduleResolution` reads the same
 * types through either condition (test/unit/dist-types.test.ts checks them all; the ESM and the
 * CommonJS entry each still resolve to a declaration of their own format, as attw asks).
 */
function writeEsmDeclarations(): void {
  for (const name of Object.keys(ENTRY)) {
    writeFileSync(`dist/${name}.d.ts`, `export * from './${name}.cjs';\n`);
  }
}

export default defineConfig([
  {
    // The library: dual ESM/CJS, no runtime dependencies. `ratewarden/redis` shares the core's
    // chunks (one RateLimiter class, one set of errors) in both formats, and so do the framework
    // middleware (frameworks are imported for their types only: optional peer dependencies, never
    // bundled or required). No source maps: they were more than half of the package, and the
    // built files are plain, readable JavaScript.
    entry: ENTRY,
    format: ['esm', 'cjs'],
    splitting: true,
    dts: false,
    clean: true,
    sourcemap: false,
    // terser, only to drop the comments (the documentation is in the declarations, where editors
    // show it): no compression, no renaming, one statement per line, `@__PURE__` annotations kept.
    minify: 'terser',
    terserOptions: {
      compress: false,
      mangle: false,
      format: {
        // eslint-disable-next-line @typescript-eslint/no-deprecated -- terser 5.51's types call it unimplemented, but its printer (lib/output.js) reads it: without it each file is one line.
        beautify: true,
        comments: false,
        preserve_annotations: true,
        indent_level: 2,
      },
    },
    target: 'es2022',
    platform: 'neutral',
    onSuccess: () => {
      writeEsmDeclarations();
      return Promise.resolve();
    },
  },
  {
    // The declarations (dist/*.d.cts and their shared chunks), without the members marked
    // @internal (not part of the public API). No `clean` here: the first config's empties dist/
    // when it starts, long before this declaration build (a TypeScript program) writes anything.
    entry: ENTRY,
    format: ['cjs'],
    dts: { only: true, compilerOptions: { stripInternal: true } },
    clean: false,
    target: 'es2022',
    platform: 'neutral',
  },
]);
