// The README's install from a tarball, as a user follows it: pack in the clone, then install by
// the path the README gives from a project of one's own, outside the clone (a relative path such
// as `./ratewarden-0.1.0.tgz` only worked inside it). The installed package then runs the README's
// quick start, loads every entry point through require (with the optional peers linked in), and
// `npx ratewarden replay` replays the built-in sample. Needs npm and its registry or cache (the
// package's one dependency).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const PACKAGE = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  version: string;
  exports: Record<string, unknown>;
  peerDependencies: Record<string, string>;
};

function block(marker: string, lang: string): string {
  const match = new RegExp(`<!-- ${marker}: [^>]*-->\\n\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``).exec(README);
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
    run('npm', ['pack', '--ignore-scripts', '--pack-destination', dir], ROOT);
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

    const replay = JSON.parse(run('npx', ['--no-install', 'ratewarden', 'replay', '--json'], app)) as Record<string, unknown>;
    expect(replay).toMatchObject({ sample: true, requests: 10_000, rejected: 87 });
  }, 120_000);
});
