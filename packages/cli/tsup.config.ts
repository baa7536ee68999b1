import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { defineConfig } from 'tsup';

/** Where the HTML report's chart libraries go (src/cli/chart-libraries.ts reads them there). */
const VENDOR = 'dist/vendor';

/**
 * Packages in vega's dependency tree that its browser build (build/vega.min.js) does not hold:
 * type declarations, and the command-line tools of d3-dsv and topojson-client with their own
 * dependencies (none of them is imported by the modules vega bundles).
 */
const NOT_BUNDLED = new Set(['@types/estree', '@types/geojson', 'vega-typings', 'commander', 'iconv-lite', 'rw', 'safer-buffer']);

interface PackageJson {
  readonly name: string;
  readonly version: string;
  readonly license?: string;
  readonly dependencies?: Readonly<Record<string, string>>;
}

/** The folder of package `name` as Node resolves it from `from` (the nearest node_modules). */
function packageDir(name: string, from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (dirname(dir) === dir) throw new Error(`${name} (a dependency of ${from}) is not installed`);
  }
}

/** The licence text of the package in `dir` (its LICENSE file, whatever its case and extension). */
function licenceText(dir: string): string {
  for (const name of ['LICENSE', 'LICENSE.md', 'LICENSE.txt', 'license', 'LICENCE']) {
    if (existsSync(join(dir, name))) return readFileSync(join(dir, name), 'utf8').trim();
  }
  throw new Error(`no licence file in ${dir}`);
}

/**
 * Copies vega's and vega-lite's browser builds, unmodified, into dist/vendor/ (the HTML report
 * of `--report` inlines them; both stay development dependencies), with
 * THIRD-PARTY-LICENSES.txt: the licence of every package their builds hold, read from
 * node_modules/, grouped by identical text. vega.min.js bundles vega's whole dependency tree
 * (less NOT_BUNDLED; rollup with no externals); vega-lite.min.js holds only vega-lite's own
 * code (its source map lists only vega-lite's sources; the rest it takes from the global
 * `vega`). The minified build drops the comments by which vega credits code it adapted (a BSD
 * notice among them): they are copied from the unminified build/vega.js.
 */
function copyChartLibraries(): void {
  const require = createRequire(import.meta.url);
  const vegaBuild = dirname(require.resolve('vega'));
  const vegaLiteBuild = dirname(require.resolve('vega-lite'));
  mkdirSync(VENDOR, { recursive: true });
  copyFileSync(join(vegaBuild, 'vega.min.js'), join(VENDOR, 'vega.min.js'));
  copyFileSync(join(vegaLiteBuild, 'vega-lite.min.js'), join(VENDOR, 'vega-lite.min.js'));

  const packages = new Map<string, { readonly pkg: PackageJson; readonly dir: string }>();
  const walk = (dir: string): void => {
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as PackageJson;
    const id = `${pkg.name}@${pkg.version}`;
    if (packages.has(id)) return;
    packages.set(id, { pkg, dir });
    for (const dependency of Object.keys(pkg.dependencies ?? {})) {
      if (!NOT_BUNDLED.has(dependency)) walk(packageDir(dependency, dir));
    }
  };
  const vegaDir = join(vegaBuild, '..');
  const vegaLiteDir = join(vegaLiteBuild, '..');
  walk(vegaDir);
  const vegaLite = JSON.parse(readFileSync(join(vegaLiteDir, 'package.json'), 'utf8')) as PackageJson;
  packages.set(`${vegaLite.name}@${vegaLite.version}`, { pkg: vegaLite, dir: vegaLiteDir });

  const byText = new Map<string, string[]>();
  for (const [id, { pkg, dir }] of [...packages].sort(([a], [b]) => a.localeCompare(b))) {
    const text = licenceText(dir);
    const names = byText.get(text) ?? [];
    names.push(`${id} (${pkg.license ?? 'see below'})`);
    byText.set(text, names);
  }
  const vega = packages.get(`vega@${(JSON.parse(readFileSync(join(vegaDir, 'package.json'), 'utf8')) as PackageJson).version}`);
  const credits = readFileSync(join(vegaBuild, 'vega.js'), 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => /^(\/\/|\*) .*(Adapted from|Ported from|licen[sc]e)/i.test(line));
  const notices = /\/\*\s*(Copyright[\s\S]*?)\*\//.exec(readFileSync(join(vegaBuild, 'vega.js'), 'utf8'));
  const rule = '-'.repeat(78);
  const out = [
    "Third-party software in this folder, inlined by ratewarden's HTML report",
    '(`ratewarden replay --report FILE.html`, `ratewarden suggest --report FILE.html`) into every',
    'report it writes. Both files are copied unmodified from the npm packages:',
    '',
    `  vega.min.js       ${vega?.pkg.name ?? 'vega'} ${vega?.pkg.version ?? ''} (build/vega.min.js), ${vega?.pkg.license ?? ''}`,
    `  vega-lite.min.js  vega-lite ${vegaLite.version} (build/vega-lite.min.js), ${vegaLite.license ?? ''}`,
    '',
    "vega.min.js bundles vega's packages and those they import; vega-lite.min.js holds vega-lite's",
    'own code only. Their licences follow, each text once with the packages (as installed when',
    'this copy was built) it applies to.',
    '',
    "Code adapted inside vega's packages, as credited in its unminified source (build/vega.js):",
    ...[...new Set(credits)].map((line) => `  ${line.replace(/^(\/\/|\*) /, '')}`),
  ];
  if (notices?.[1] !== undefined) {
    out.push('', 'The word cloud layout (vega-wordcloud, from d3-cloud) carries this notice:', '', notices[1].replace(/^ {4}/gm, '').trim());
  }
  for (const [text, names] of byText) out.push('', rule, ...names, '', text);
  writeFileSync(join(VENDOR, 'THIRD-PARTY-LICENSES.txt'), `${out.join('\n')}\n`);
}

export default defineConfig({
  // The command-line tool: ESM only, Node APIs allowed. The library (`ratewarden`, the workspace's
  // root package, a development dependency) is bundled in, so that the command's decisions are
  // those of the library it was built and tested with, and its tarball installs alone; vega and
  // vega-lite stay dependencies.
  entry: { cli: 'src/main.ts' },
  format: ['esm'],
  dts: false,
  clean: true,
  sourcemap: true,
  target: 'node20',
  platform: 'node',
  noExternal: ['ratewarden'],
  banner: { js: '#!/usr/bin/env node' },
  onSuccess: () => {
    copyChartLibraries();
    return Promise.resolve();
  },
});
