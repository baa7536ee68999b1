// The core runs unchanged in a browser: headless Chromium loads the built ESM bundle
// (dist/index.js, as published) through a `<script type="module">` in test/fixtures/browser/index.html,
// makes decisions on an injected clock and writes a JSON summary into the page, which
// `--dump-dom` prints. Needs Debian's chromium (.ci/run installs it); fails when it is missing.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { extname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const chromium = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** Only these folders are served (no path outside them, whatever the URL). */
const served = [join(root, 'dist') + sep, join(root, 'test', 'fixtures', 'browser') + sep];
const types: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
};

let server: Server;
let origin: string;
/** Every request the page made, with its status: shown when the page did not run. */
const requests: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://localhost').pathname);
    const file = resolve(root, `.${path}`);
    const type = types[extname(file)];
    let status = 404;
    if (req.method === 'GET' && type !== undefined && served.some((dir) => file.startsWith(dir)) && existsSync(file)) {
      status = 200;
      res.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' });
      res.end(readFileSync(file));
    } else {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
    }
    requests.push(`${req.method} ${path} ${status}`);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((done) => (server ? server.close(() => done()) : done()));
});

/** Runs headless Chromium on `url` with a fresh profile and returns the DOM it dumps. */
async function dumpDom(url: string, timeoutMs = 60_000): Promise<string> {
  const profile = mkdtempSync(join(tmpdir(), 'ratewarden-chromium-'));
  try {
    const args = [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-dev-shm-usage',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      `--user-data-dir=${profile}`,
      // Waits for the page to settle (network idle, timers run) before dumping, on top of the
      // page writing its summary synchronously before DOMContentLoaded.
      '--virtual-time-budget=5000',
      '--dump-dom',
      url,
    ];
    // Its own process group, so that a hung browser is ended with all of its children.
    const child = spawn(chromium, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => {
      if (child.pid !== undefined) {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
    }, timeoutMs);
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((done, fail) => {
      child.on('error', fail);
      child.on('close', (c, s) => done([c, s]));
    }).finally(() => clearTimeout(timer));
    if (code !== 0 || !stdout.includes('</html>')) {
      throw new Error(
        `${chromium} exited with ${code ?? signal} after dumping ${stdout.length} characters` +
          (signal === 'SIGKILL' ? ` (killed after ${timeoutMs} ms)` : '') +
          `\nstderr (last 2000 characters):\n${stderr.slice(-2000)}`,
      );
    }
    return stdout;
  } finally {
    rmSync(profile, { recursive: true, force: true });
  }
}

/** The text of `<pre id="out">` in a serialised DOM, unescaped. */
function outText(dom: string): string | undefined {
  const match = /<pre id="out">([\s\S]*?)<\/pre>/.exec(dom);
  return match?.[1]
    ?.replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&nbsp;/g, '\u00a0')
    .replace(/&amp;/g, '&');
}

describe('the built ESM bundle in headless Chromium', () => {
  it('decides exactly as in Node', { timeout: 90_000 }, async () => {
    if (!existsSync(chromium)) {
      throw new Error(
        `Chromium not found at ${chromium}: the browser test needs it. Install Debian's chromium ` +
          '(apt-get install chromium; .ci/run does when it is missing) or set CHROMIUM_PATH.',
      );
    }
    if (!existsSync(join(root, 'dist', 'index.js'))) {
      throw new Error('dist/index.js is missing: build first (`npm test` runs the build).');
    }
    const dom = await dumpDom(`${origin}/test/fixtures/browser/index.html`);
    const text = outText(dom);
    if (text === undefined || text === 'pending') {
      throw new Error(
        `the page's module script did not run (out: ${JSON.stringify(text)}).\nrequests:\n${requests.join('\n')}\n` +
          `dumped DOM (first 2000 characters):\n${dom.slice(0, 2000)}`,
      );
    }
    const summary = JSON.parse(text) as Record<string, unknown>;
    expect(summary.failure, 'the page threw').toBeUndefined();
    expect(summary.done).toBe(true);
    expect(requests).toContain('GET /dist/index.js 200');

    // A browser, not Node.
    expect(summary.environment).toMatchObject({ hasProcess: false, userAgent: expect.stringContaining('Chrome') });

    // Sliding-window log, 3 per 10 s: three allowed, then rejected until the first request leaves.
    const ok = (remaining: number) => ({ allowed: true, remaining, retryAfter: 0, limit: 3, resetAfter: 10 });
    const rejected = { allowed: false, remaining: 0, retryAfter: 10, limit: 3, resetAfter: 10 };
    expect(summary.log).toEqual([ok(2), ok(1), ok(0), rejected]);
    expect(summary.peek).toEqual(rejected);
    expect(summary.otherKey).toEqual(ok(2));
    expect(summary.afterWindow).toEqual(ok(2));
    expect(summary.headers).toEqual({
      'RateLimit-Policy': '"default";q=3;w=10',
      RateLimit: '"default";r=0;t=10',
      'Retry-After': '10',
      'X-RateLimit-Limit': '3',
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': '10',
    });
    expect(summary.problem).toEqual({
      type: 'about:blank',
      title: 'Too Many Requests',
      status: 429,
      detail: 'Rate limit of 3 exceeded; retry in 10 s.',
      retryAfter: 10,
    });

    // GCRA, 2 per second: a burst of two, then one every 500 ms.
    expect(summary.gcra).toEqual([
      { allowed: true, remaining: 1, retryAfter: 0, limit: 2, resetAfter: 0.5 },
      { allowed: true, remaining: 0, retryAfter: 0, limit: 2, resetAfter: 1 },
      { allowed: false, remaining: 0, retryAfter: 0.5, limit: 2, resetAfter: 1 },
      { allowed: true, remaining: 0, retryAfter: 0, limit: 2, resetAfter: 1 },
    ]);

    // The default clock (performance.now) and sweep timers work in a browser.
    expect(summary.defaultClock).toEqual([true, false]);
    expect(summary.error).toEqual({ rangeError: true, rateWarden: true, code: 'ERR_RATEWARDEN_OUT_OF_RANGE' });
  });
});
