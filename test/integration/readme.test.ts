// The README's code blocks are real code: each marked block is extracted and run here, against
// the built package (its `import ... from 'ratewarden'` resolves to dist/ through the exports map).
// The examples/ blocks are checked by examples.test.ts, which runs each example.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import FakeTimers from '@sinonjs/fake-timers';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RedisServer } from '../support/redis-server.js';
import { UpstashFront } from '../support/upstash-front.js';
import { captureWarnings } from '../support/warnings.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const readme = readFileSync(join(root, 'README.md'), 'utf8');

function block(marker: string): string {
  const match = new RegExp(`<!-- ${marker}: [^>]*-->\\n\`\`\`ts\\n([\\s\\S]*?)\`\`\``).exec(readme);
  if (!match?.[1]) throw new Error(`README block ${marker} not found`);
  return match[1];
}

/**
 * Writes the block to a module inside the project (so `ratewarden` resolves) and runs it, with
 * `performance` faked (frozen) unless the block installs fake timers itself: no test reads the
 * wall clock.
 */
async function run(marker: string, fakeClock = true): Promise<string[]> {
  const dir = join(root, 'node_modules', '.readme-blocks');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${marker}.mts`);
  writeFileSync(file, `${block(marker)}\nexport {};\n`);
  const lines: string[] = [];
  vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => {
    lines.push(args.map(String).join(' '));
  });
  const clock = fakeClock ? FakeTimers.withGlobal(globalThis).install({ toFake: ['performance', 'Date'] }) : undefined;
  try {
    await import(/* @vite-ignore */ `${file}?t=${marker}`);
  } finally {
    clock?.uninstall();
  }
  return lines;
}

describe('README code blocks', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('quick start: the first request is allowed with 299 left', async () => {
    expect(await run('quick-start')).toEqual(['allowed, 299 left in the window']);
  });

  it('counting failures: successes are given back, three failures spend the limit', async () => {
    expect(await run('counting-failures')).toEqual(['200 200 401 401 401 429']);
  });

  it('strategy: GCRA at 600 per minute', async () => {
    expect(await run('strategy')).toEqual(['599']);
  });

  it('tiers: alice is pro, bob is free', async () => {
    expect(await run('tiers')).toEqual(['600 60']);
  });

  it('custom strategy: an aligned fixed window, two per minute, a new window at the boundary', async () => {
    expect(await run('custom-strategy')).toEqual(['1 0 false 1', '1']);
  });

  it('group: the per-second limit binds, nothing else is recorded', async () => {
    expect(await run('group')).toEqual(['false per-second 0,990,4990']);
  });

  it('shadow: the third request is let through, logged and counted', async () => {
    expect(await run('shadow')).toEqual(['would refuse k1 (limit api)', '200 200 200 1']);
  });

  it('redis: a shared limit through node-redis, against a real redis-server; the client has an error listener', async () => {
    const server = await RedisServer.start();
    process.env.REDIS_URL = server.url;
    const missingListener = captureWarnings('ERR_RATEWARDEN_NO_ERROR_LISTENER');
    try {
      expect(await run('redis')).toEqual(['true 299 shared']);
      // Copied as written, the snippet keeps the process alive when Redis goes down.
      expect(block('redis')).toContain("client.on('error',");
      expect(missingListener.warnings).toEqual([]);
    } finally {
      missingListener.restore();
      delete process.env.REDIS_URL;
      await server.stop();
    }
  });

  it('redis at the edge: the Workers block, two isolates sharing one count through @upstash/redis and a test front of Upstash', async () => {
    const server = await RedisServer.start();
    const front = await UpstashFront.start(server.port);
    try {
      const dir = join(root, 'node_modules', '.readme-blocks');
      mkdirSync(dir, { recursive: true });
      const file = join(dir, 'upstash-worker.mts');
      writeFileSync(file, block('upstash-worker'));
      interface Worker {
        readonly default: { fetch(request: Request, env: Record<string, string>): Promise<Response> };
      }
      // Two imports of the module: two isolates, each with its own client and limiter.
      const isolates = [
        (await import(/* @vite-ignore */ `${file}?isolate=1`)) as Worker,
        (await import(/* @vite-ignore */ `${file}?isolate=2`)) as Worker,
      ];
      const env = { UPSTASH_REDIS_REST_URL: front.url, UPSTASH_REDIS_REST_TOKEN: front.token };
      const seen: string[] = [];
      for (const isolate of [...isolates, ...isolates]) {
        const response = await isolate.default.fetch(new Request('https://api.example/hello', { headers: { 'cf-connecting-ip': '203.0.113.7' } }), env);
        seen.push(`${response.status} ${await response.text()} ${response.headers.get('RateLimit')}`);
      }
      expect(seen).toEqual([96, 97, 98, 99].reverse().map((left) => `200 {"path":"/hello"} "default";r=${left};t=60`));
      expect(front.received.length).toBeGreaterThanOrEqual(4);
    } finally {
      await front.close();
      await server.stop();
    }
  });

  it('fake timers test file: the README block is test/unit/readme-fake-timers-example.test.ts, verbatim', () => {
    const match = /<!-- fake-timers-test: [^>]*-->\n```ts\n([\s\S]*?)```/.exec(readme);
    expect(match?.[1]).toBe(readFileSync(join(root, 'test', 'unit', 'readme-fake-timers-example.test.ts'), 'utf8'));
  });

  it('fake timers: a limit of 1 per 60 s, then a tick of 60 s', async () => {
    expect(await run('fake-timers', false)).toEqual(['true', '60', 'true']);
  });
});
