// The login recipe (examples/login/recipe.ts) under the attack of issue 22: 200 wrong passwords
// for one account from one address, sent at once, each password check taking 50 ms. Exactly 5
// password checks may run: in memory behind one Express server, and with both limits on one
// Redis shared by two server processes (100 attempts sent to each at once). Then a correct
// password for another account from the same address logs in and is not counted as a failure,
// and clears that account's failures. The servers are child processes
// (test/fixtures/login-server.mjs) running the recipe against the built package.
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { RedisServer } from '../support/redis-server.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Sends one login attempt; resolves to its status and body. */
async function login(port: number, username: string, password: string): Promise<{ status: number; body: string; retryAfter: string | null }> {
  const response = await fetch(`http://127.0.0.1:${port}/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username, password }),
  });
  return { status: response.status, body: await response.text(), retryAfter: response.headers.get('Retry-After') };
}

/** How many of each status. */
function tally(statuses: readonly number[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}

const children: ChildProcess[] = [];
let redis: RedisServer | undefined;
afterAll(async () => {
  for (const child of children) child.kill();
  await redis?.stop();
});

/** Starts one server process of the recipe (on Redis at `url`, else in memory); resolves to its port. */
async function startServer(options: { url?: string; client?: 'ioredis' | 'node-redis' }): Promise<number> {
  const child = fork(join(root, 'test', 'fixtures', 'login-server.mjs'), [JSON.stringify(options)], {
    cwd: root,
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  children.push(child);
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const [line] = (await once(lines, 'line')) as [string];
  lines.close();
  return (JSON.parse(line) as { port: number }).port;
}

/** GETs `path` on the server at `port` and returns its JSON. */
async function getJson<T>(port: number, path: string): Promise<T> {
  return (await (await fetch(`http://127.0.0.1:${port}${path}`)).json()) as T;
}

/**
 * The attack and what follows, on servers at `ports` (the attempts spread over them in turn):
 * 200 wrong passwords for alice at once, then alice again, then bob's right password and six
 * wrong ones.
 */
async function attack(ports: readonly number[]): Promise<void> {
  const on = (i: number): number => ports[i % ports.length] as number;
  const attempts = await Promise.all(Array.from({ length: 200 }, (_, i) => login(on(i), 'alice', `guess-${i}`)));
  const checks = await Promise.all(ports.map(async (port) => (await getJson<{ checks: number }>(port, '/checks')).checks));
  expect(checks.reduce((a, b) => a + b, 0)).toBe(5);
  expect(tally(attempts.map((a) => a.status))).toEqual({ 401: 5, 429: 195 });
  // Locked out for 15 minutes from the first refusal, on every server: the block answers.
  const again = await Promise.all(ports.map((port) => login(port, 'alice', 'guess-200')));
  expect(again.map((a) => a.status)).toEqual(ports.map(() => 429));
  // (Its time left: 15 minutes less the attack's duration, a few seconds at most.)
  for (const a of again) expect(Number(a.retryAfter)).toBeGreaterThan(880);
  for (const a of again) expect(Number(a.retryAfter)).toBeLessThanOrEqual(900);
  // Another account from the same address logs in; its success is not a failure of the address.
  expect((await login(on(1), 'bob', 'correct horse')).status).toBe(200);
  expect((await getJson<{ failures: number }>(on(0), '/failures?address=127.0.0.1')).failures).toBe(5);
  // bob's success cleared his failures: 5 wrong ones are checked, the sixth refused.
  const bobs = [];
  for (let i = 0; i < 6; i++) bobs.push((await login(on(i), 'bob', `wrong-${i}`)).status);
  expect(bobs).toEqual([401, 401, 401, 401, 401, 429]);
  const total = await Promise.all(ports.map(async (port) => (await getJson<{ checks: number }>(port, '/checks')).checks));
  expect(total.reduce((a, b) => a + b, 0)).toBe(5 + 1 + 5);
}

describe('the login recipe, 200 wrong passwords at once, each check taking 50 ms', () => {
  it('in memory, behind one Express server: exactly 5 password checks', async () => {
    await attack([await startServer({})]);
  }, 60_000);

  it('on one Redis shared by two server processes (ioredis and node-redis): exactly 5 password checks', async () => {
    redis = await RedisServer.start();
    const url = redis.url;
    await attack(await Promise.all([startServer({ url, client: 'ioredis' }), startServer({ url, client: 'node-redis' })]));
  }, 60_000);
});
