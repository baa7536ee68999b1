import { defineConfig } from 'tsup';

export default defineConfig([
  {
    // The library: dual ESM/CJS with declarations, no runtime dependencies.
    entry: { index: 'src/index.ts' },
    format: ['esm', 'cjs'],
    dts: true,
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
