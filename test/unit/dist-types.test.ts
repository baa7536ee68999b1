// What ships type-checks where users compile: a consumer project outside this clone, on
// `module: "commonjs"` (TypeScript's default resolution there is `node10`, which ignores the
// `exports` map and reads `typesVersions`), imports every entry point of the packed tarball
// (`npm pack` of the dist/ built by `npm test`) and uses them together. `npm run lint:package`
// (attw, every resolver) checks the same map by its rules; this one compiles real code against it,
// and, with skipLibCheck off, the shipped declarations themselves under nodenext, node16 and
// bundler, as ES module and CommonJS projects (the ESM entries' declarations re-export the
// CommonJS ones: tsup.config.ts).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PACKAGE = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  exports: Record<string, unknown>;
  peerDependencies: Record<string, string>;
};
const TSC = createRequire(import.meta.url).resolve('typescript/bin/tsc');

/** Every entry point a user imports: `ratewarden`, `ratewarden/redis`, ... (not package.json). */
const SPECIFIERS = Object.keys(PACKAGE.exports)
  .filter((subpath) => subpath !== './package.json')
  .map((subpath) => (subpath === '.' ? 'ratewarden' : `ratewarden/${subpath.slice(2)}`));

// Uses the entry points together: a Redis store as a RateLimiter's strategy, the limiter in each
// middleware (one declaration of each class across entry points, or these would not type-check),
// and a wrong option that must be an error (the types are not `any`).
const USAGE = `
import { ErrorCode, RateLimiter, RateWardenTypeError } from 'ratewarden';
import { RedisGCRA } from 'ratewarden/redis';
import { expressRateLimit } from 'ratewarden/express';
import { fastifyRateLimit } from 'ratewarden/fastify';
import { withRateLimit } from 'ratewarden/fetch';
import { honoRateLimit, type RateLimitVariables } from 'ratewarden/hono';
import { Hono } from 'hono';
import { Redis } from 'ioredis';

const limiter = new RateLimiter({
  threshold: 10,
  windowSeconds: 1,
  strategy: new RedisGCRA({ client: new Redis({ lazyConnect: true }), prefix: 'p:' }),
});
export const express = expressRateLimit({ limiter });
export const fastify = fastifyRateLimit({ limiter });
export const fetch = withRateLimit(async () => new Response('ok'), { limiter, key: () => 'k' });
export const hono = new Hono<{ Variables: RateLimitVariables }>()
  .use('/api/*', honoRateLimit({ limiter, key: (c) => c.req.header('x-api-key') ?? 'anonymous' }))
  .get('/api/x', (c) => c.json({ remaining: c.get('rateLimit')?.remaining }))
  // @ts-expect-error: the variable is undefined where the middleware decided nothing (skip, onError)
  .get('/api/y', (c) => c.json({ remaining: c.get('rateLimit').remaining }));
export const error: RateWardenTypeError = new RateWardenTypeError('message', ErrorCode.InvalidType);
// @ts-expect-error: threshold is a number
new RateLimiter({ threshold: '10', windowSeconds: 1 });
`;

/** One namespace import per entry point, each required not to be `any` (an unresolved module is). */
function everyEntryPoint(): string {
  const lines = ['type NotAny<T> = 0 extends 1 & T ? never : T;'];
  SPECIFIERS.forEach((specifier, i) => {
    lines.push(`import * as entry${i} from '${specifier}';`, `export const typed${i}: NotAny<typeof entry${i}> = entry${i};`);
  });
  return lines.join('\n');
}

function run(command: string, args: string[], cwd: string): string {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8' });
  expect(result.status, `${command} ${args.join(' ')}\n${result.stdout}${result.stderr}`).toBe(0);
  return result.stdout;
}

let dir = '';
beforeAll(() => {
  expect(existsSync(join(ROOT, 'dist', 'index.d.ts')), 'dist/ is missing: build first (`npm test` does)').toBe(true);
  dir = mkdtempSync(join(tmpdir(), 'ratewarden-consumer-'));
  const [packed] = JSON.parse(
    run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], ROOT),
  ) as { filename: string }[];
  const installed = join(dir, 'node_modules', 'ratewarden');
  mkdirSync(installed, { recursive: true });
  run('tar', ['xzf', join(dir, packed?.filename ?? ''), '-C', installed, '--strip-components=1'], dir);
  // The peers a user installs next to ratewarden (and their @types), from this clone's node_modules.
  const peers = Object.keys(PACKAGE.peerDependencies).flatMap((name) => [name, `@types/${name.replace('@', '').replace('/', '__')}`]);
  for (const name of [...peers, '@types/node']) {
    const source = join(ROOT, 'node_modules', name);
    if (!existsSync(source)) continue;
    mkdirSync(dirname(join(dir, 'node_modules', name)), { recursive: true });
    symlinkSync(source, join(dir, 'node_modules', name), 'dir');
  }
}, 60_000);
afterAll(() => {
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

describe('the packed package in a TypeScript project of its own', () => {
  it('type-checks every entry point under module commonjs (node10 resolution)', () => {
    expect(SPECIFIERS).toEqual(expect.arrayContaining(['ratewarden', 'ratewarden/redis', 'ratewarden/express', 'ratewarden/fastify', 'ratewarden/fetch', 'ratewarden/hono']));
    writeFileSync(join(dir, 'usage.ts'), USAGE);
    writeFileSync(join(dir, 'entries.ts'), everyEntryPoint());
    // `tsc --init`'s defaults for a CommonJS project (as in Nest's starter). skipLibCheck, as there:
    // errors inside the shipped declarations are attw's (internal-resolution-error, lint:package).
    const compilerOptions = {
      module: 'commonjs',
      moduleResolution: 'node10',
      target: 'es2022',
      strict: true,
      esModuleInterop: true,
      skipLibCheck: true,
      noEmit: true,
      types: ['node'],
    };
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['usage.ts', 'entries.ts'] }));
    expect(readdirSync(join(dir, 'node_modules', 'ratewarden', 'dist')).filter((f) => f.endsWith('.d.ts')).length).toBeGreaterThanOrEqual(SPECIFIERS.length);
    const tsc = spawnSync(process.execPath, [TSC, '-p', dir], { cwd: dir, encoding: 'utf8' });
    expect(tsc.stdout + tsc.stderr).toBe('');
    expect(tsc.status).toBe(0);
  }, 60_000);

  // The ESM entries' declarations re-export the CommonJS ones (tsup.config.ts): both kinds of
  // project read the same types, checked here inside the shipped declarations too
  // (skipLibCheck off), under each resolution that reads the `exports` map.
  it.each([
    ['an ES module project, nodenext', 'nodenext', 'nodenext', 'module'],
    ['a CommonJS project, nodenext', 'nodenext', 'nodenext', 'commonjs'],
    ['an ES module project, node16', 'node16', 'node16', 'module'],
    ['a CommonJS project, node16', 'node16', 'node16', 'commonjs'],
    ['a bundler project', 'preserve', 'bundler', 'module'],
  ])('type-checks every entry point in %s, the shipped declarations included', (_name, module, moduleResolution, type) => {
    const project = mkdtempSync(join(dir, 'project-'));
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type }));
    writeFileSync(join(project, 'usage.ts'), USAGE);
    writeFileSync(join(project, 'entries.ts'), everyEntryPoint());
    const compilerOptions = { module, moduleResolution, target: 'es2022', lib: ['es2022', 'dom', 'esnext.disposable'], strict: true, skipLibCheck: false, noEmit: true, types: ['node'] };
    writeFileSync(join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['usage.ts', 'entries.ts'] }));
    const tsc = spawnSync(process.execPath, [TSC, '-p', project], { cwd: project, encoding: 'utf8' });
    const errors = (tsc.stdout + tsc.stderr).split('\n').filter((line) => line !== '');
    // One known gap, not this package's to close: under `node16` (unlike `nodenext`, TypeScript
    // 5.8+), a CommonJS declaration may not import an ES module, and @nestjs/common 12 is one, so
    // `ratewarden/nestjs`'s declaration (CommonJS, read by both kinds of project) fails there with
    // skipLibCheck off (Nest's starter sets it on). Every other entry point is clean.
    const known = (line: string): boolean => moduleResolution === 'node16' && /ratewarden\/dist\/nestjs\.d\.cts\(1,\d+\): error TS1479: .*"?@nestjs\/common/.test(line);
    expect(errors.filter((line) => !known(line))).toEqual([]);
    if (moduleResolution === 'node16') expect(errors.filter(known)).toHaveLength(1);
  }, 60_000);
});
