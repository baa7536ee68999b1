/**
 * The charting libraries the HTML report inlines ({@link loadChartLibraries}): the browser builds
 * of vega and vega-lite, and the licences that come with them.
 *
 * They are development dependencies of ratewarden (the library keeps one runtime dependency):
 * the build copies them, unmodified, into `dist/vendor/` next to `dist/cli.js` with their licence
 * texts (`tsup.config.ts`, `copyChartLibraries`), and this module reads them from there at run
 * time. Run from the sources (under vitest, or `tsx src/main.ts`), there is no `vendor/`
 * beside this file, and they are read from `node_modules/` instead.
 *
 * @module
 */

import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The file names in `dist/vendor/`, as the build writes them. */
export const VENDOR_FILES = {
  vega: 'vega.min.js',
  vegaLite: 'vega-lite.min.js',
  notices: 'THIRD-PARTY-LICENSES.txt',
} as const;

/** The texts the HTML report inlines. */
export interface ChartLibraries {
  /** vega's browser build (`vega.min.js`, a UMD script defining the global `vega`). */
  readonly vega: string;
  /** vega-lite's browser build (`vega-lite.min.js`, defining `vegaLite`; needs `vega` first). */
  readonly vegaLite: string;
  /** The licences of vega, vega-lite and every package their builds bundle (plain text). */
  readonly notices: string;
}

let cached: ChartLibraries | undefined;

/**
 * The chart libraries: from `vendor/` beside this module when it is there (the built and the
 * installed package), else from `node_modules/` (the sources). Read once, then cached.
 *
 * @throws {Error} when neither is there (a package built without its vendor step, or a
 *   checkout without `npm ci`), naming both places.
 */
export function loadChartLibraries(): ChartLibraries {
  cached ??= readChartLibraries(new URL('./vendor/', import.meta.url));
  return cached;
}

/** @internal {@link loadChartLibraries} without its cache: `vendor` is the folder tried first. */
export function readChartLibraries(vendor: URL): ChartLibraries {
  const dir = fileURLToPath(vendor);
  if (existsSync(join(dir, VENDOR_FILES.vega))) {
    return {
      vega: readFileSync(join(dir, VENDOR_FILES.vega), 'utf8'),
      vegaLite: readFileSync(join(dir, VENDOR_FILES.vegaLite), 'utf8'),
      notices: readFileSync(join(dir, VENDOR_FILES.notices), 'utf8'),
    };
  }
  let vegaBuild: string;
  let vegaLiteBuild: string;
  try {
    // Both packages' main entries live in their build/ folders, next to the .min.js files
    // (their `exports` maps do not export the .min.js files themselves).
    const require = createRequire(import.meta.url);
    vegaBuild = dirname(require.resolve('vega'));
    vegaLiteBuild = dirname(require.resolve('vega-lite'));
  } catch (error) {
    throw new Error(
      `The HTML report's chart libraries are missing: neither ${join(dir, VENDOR_FILES.vega)} ` +
        '(copied there by `npm run build`) nor the vega and vega-lite packages were found.',
      { cause: error },
    );
  }
  const licence = (build: string, name: string): string =>
    `${name}\n\n${readFileSync(join(build, '..', 'LICENSE'), 'utf8')}`;
  return {
    vega: readFileSync(join(vegaBuild, VENDOR_FILES.vega), 'utf8'),
    vegaLite: readFileSync(join(vegaLiteBuild, VENDOR_FILES.vegaLite), 'utf8'),
    notices:
      'Read from node_modules (not a built package): the licences of vega and vega-lite only.\n\n' +
      `${licence(vegaBuild, 'vega')}\n${licence(vegaLiteBuild, 'vega-lite')}`,
  };
}
