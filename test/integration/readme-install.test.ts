// The README's install from a tarball, as a user follows it: pack in the clone, then install by
// the path the README gives from a project of one's own, outside the clone (a relative path such
// as `./ratewarden-0.1.0.tgz` only worked inside it). The installed package then runs the README's
// quick start and loads every entry point through require (with the optional peers linked in);
// the tarball holds the library only (no command, no chart library, no sample log). Then the
// command-line tool's README steps (packages/cli/README.md): `npm pack -w ratewarden-cli`, and
// `npx -p` of that tarball in a folder of its own replays the built-in sample. Needs npm and its
// registry or cache (the library's one dependency; the tool's vega and vega-lite).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const CLI_README = readFileSync(join(ROOT, 'packages', 'cli', 'README.md'), 'utf8');
const PACKAGE = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  version: string;
  exports: Record<string, unknown>;
  peerDependencies: Record<string, string>;
};

function block(marker: string, lang: string, readme = README): string {
  const match = new RegExp(`<!-- ${marker}: [^>]*-->\\n\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``).exec(readme);
  if (!match?.[1]) throw new Error(`README block ${marker} not found`);
  return match[1];
}

function run(command: string, args: string[], cwd: string): string {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8' });
  expect(result.status, `${command} ${args.join(' ')} (in ${cwd})\n${result.stdout}${result.stderr}`).toBe(0);
  return result.stdout;
}

let dir = '';
afterAll(() => {
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

describe('README: install from a tarball', () => {
  it('packs to an absolute folder and installs from there in a project outside the clone', () => {
    const steps = block('install-from-tarball', 'sh');
    const destination = /npm pack --pack-destination (\S+)/.exec(steps)?.[1] ?? '';
    const installed = /npm install (\S+)/.exec(steps)?.[1] ?? '';
    expect(isAbsolute(destination), destination).toBe(true);
    expect(installed).toBe(join(destination, `ratewarden-${PACKAGE.version}.tgz`));

    // The same steps with a folder of this test's own for the README's destination. dist/ is
    // already built (`npm test` builds it): --ignore-scripts, or prepack would rebuild it
    // (and empty it) under the other tests.
    dir = mkdtempSync(join(tmpdir(), 'ratewarden-install-'));
    const [packed] = JSON.parse(run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], ROOT)) as { unpackedSize: number }[];
    // The library installs small (issue 24: under 1 MB unpacked; 0.94 MB when it was set).
    expect(packed?.unpackedSize).toBeLessThan(1_000_000);
    const app = join(dir, 'app');
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true }));
    run('npm', ['install', join(dir, `ratewarden-${PACKAGE.version}.tgz`), '--prefer-offline', '--no-audit', '--no-fund'], app);
    const manifest = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    expect(manifest.dependencies.ratewarden).toBe(`file:../ratewarden-${PACKAGE.version}.tgz`);

    writeFileSync(join(app, 'quick-start.mjs'), block('quick-start', 'ts'));
    expect(run(process.execPath, ['quick-start.mjs'], app)).toBe('allowed, 299 left in the window\n');

    // The optional peers a user installs next to it for the entry points that need one at run
    // time, from this clone's node_modules.
    for (const name of Object.keys(PACKAGE.peerDependencies)) {
      const target = join(app, 'node_modules', name);
      if (!existsSync(join(ROOT, 'node_modules', name)) || existsSync(target)) continue;
      mkdirSync(dirname(target), { recursive: true });
      symlinkSync(join(ROOT, 'node_modules', name), target, 'dir');
    }
    const specifiers = Object.keys(PACKAGE.exports).filter((s) => s !== './package.json').map((s) => (s === '.' ? 'ratewarden' : `ratewarden/${s.slice(2)}`));
    const loaded = run(process.execPath, ['-e', `for (const s of ${JSON.stringify(specifiers)}) console.log(s, require.resolve(s), Object.keys(require(s)).length)`], app);
    for (const specifier of specifiers) {
      expect(loaded).toMatch(new RegExp(`^${specifier} ${join(app, 'node_modules', 'ratewarden', 'dist')}/\\S+\\.cjs [1-9]\\d*$`, 'm'));
    }

    // The library's tarball: dist/ (JavaScript and declarations, no source maps), the README and
    // the licence; nothing of the command-line tool.
    const files = run('tar', ['tzf', join(dir, `ratewarden-${PACKAGE.version}.tgz`)], dir).split('\n').filter((f) => f !== '');
    expect(files.filter((f) => !/^package\/(dist\/[\w-]+\.(js|cjs|d\.ts|d\.cts)|README\.md|LICENSE|package\.json)$/.test(f))).toEqual([]);
    expect(files.some((f) => /cli|vendor|vega|\.log|\.gz|\.map$/.test(f))).toBe(false);
    expect(existsSync(join(app, 'node_modules', '.bin', 'ratewarden'))).toBe(false);
  }, 120_000);

  it("packs the command-line tool and runs it from its tarball with npx, anywhere (the tool's README)", () => {
    const steps = block('install-cli-from-tarball', 'sh', CLI_README);
    const pack = /^(npm ci && )?(npm pack -w ratewarden-cli --pack-destination) (\S+)/m.exec(steps);
    const npx = /^(npx -y -p) (\S+) (ratewarden replay)/m.exec(steps);
    expect(pack?.[3]).toBe('/tmp');
    expect(npx?.[2]).toBe(`/tmp/ratewarden-cli-${PACKAGE.version}.tgz`);
    const cliDir = mkdtempSync(join(tmpdir(), 'ratewarden-cli-install-'));
    try {
      // As the README, with a folder of this test's own: --ignore-scripts, as dist/ and
      // packages/cli/dist/ are built (`npm test` builds them) and prepack would rebuild both under
      // the other tests.
      run('npm', ['pack', '-w', 'ratewarden-cli', '--ignore-scripts', '--pack-destination', cliDir], ROOT);
      const tarball = join(cliDir, `ratewarden-cli-${PACKAGE.version}.tgz`);
      const files = run('tar', ['tzf', tarball], cliDir).split('\n').filter((f) => f !== '');
      expect(files).toEqual(expect.arrayContaining(['package/dist/cli.js', 'package/data/access-combined.log.gz', 'package/README.md', 'package/LICENSE', 'package/package.json']));
      const elsewhere = join(cliDir, 'elsewhere');
      mkdirSync(elsewhere);
      const replay = JSON.parse(run('npx', ['-y', '-p', tarball, 'ratewarden', 'replay', '--json'], elsewhere)) as Record<string, unknown>;
      expect(replay).toMatchObject({ sample: true, requests: 10_000, rejected: 87 });
    } finally {
      rmSync(cliDir, { recursive: true, force: true });
    }
  }, 180_000);
});
