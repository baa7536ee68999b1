// Several Node processes, each with its own RateLimiter (several, in fact), hammer one key on one
// redis-server: the total allowed equals the threshold exactly, per window, every time.
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisServer } from '../../support/redis-server.js';

const HAMMER = fileURLToPath(new URL('../../fixtures/redis-hammer.mjs', import.meta.url));
const PROCESSES = 4;

let server: RedisServer;
let children: ChildProcess[] = [];
beforeAll(async () => {
  server = await RedisServer.start();
  children = await startHammers();
});
afterAll(async () => {
  await stopHammers(children);
  await server?.stop();
});

interface Reply {
  type: 'ready' | 'done' | 'error';
  allowed?: number;
  message?: string;
}

function nextMessage(child: ChildProcess): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null): void => reject(new Error(`child exited (${code})`));
    child.once('exit', onExit);
    child.once('message', (message) => {
      child.off('exit', onExit);
      resolve(message as Reply);
    });
  });
}

/** Forks the hammers: half on ioredis, half on node-redis. */
async function startHammers(): Promise<ChildProcess[]> {
  const children = Array.from({ length: PROCESSES }, (_, i) =>
    fork(HAMMER, [JSON.stringify({ url: server.url, clientKind: i % 2 === 0 ? 'ioredis' : 'node-redis' })], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    }),
  );
  const ready = await Promise.all(children.map(nextMessage));
  expect(ready.map((r) => r.type)).toEqual(children.map(() => 'ready'));
  return children;
}

async function stopHammers(children: ChildProcess[]): Promise<void> {
  await Promise.all(
    children.map(async (child) => {
      if (child.exitCode !== null) return;
      const exited = once(child, 'exit');
      child.send({ type: 'stop' });
      await exited;
    }),
  );
}

/** One round in every process at once; returns what each allowed. */
async function round(children: ChildProcess[], message: Record<string, unknown>): Promise<number[]> {
  const replies = await Promise.all(
    children.map((child) => {
      const reply = nextMessage(child);
      child.send({ type: 'round', ...message });
      return reply;
    }),
  );
  for (const reply of replies) if (reply.type !== 'done') throw new Error(reply.message);
  return replies.map((r) => r.allowed as number);
}

describe(`${PROCESSES} processes on one key`, () => {
  it('allow exactly the threshold per window on the Redis server clock (sliding-window log)', async () => {
    const threshold = 50;
    // No entry expires during the test: a 600 s window.
    const config = { strategy: 'log', prefix: 'mp-log:', threshold, windowSeconds: 600, time: 'redis' };
    for (let r = 0; r < 5; r++) {
      // A fresh key per round: a fresh window, 4 × 60 requests contending for 50 slots.
      const allowed = await round(children, { ...config, key: `user-${r}`, requests: 60, concurrency: 8, nowMs: 0 });
      expect(allowed.reduce((a, b) => a + b, 0)).toBe(threshold);
    }
  });

  it.each(['log', 'gcra'])('allow exactly the threshold in every window of a shared schedule (%s, limiter time)', async (strategy) => {
    const threshold = 40;
    const windowSeconds = 10;
    const config = { strategy, prefix: `mp-${strategy}:`, threshold, windowSeconds, time: 'limiter' };
    // The same key, window after window: each round happens one window after the previous one,
    // so every round starts from a clear window and again allows exactly `threshold`.
    for (let r = 0; r < 6; r++) {
      const nowMs = 1_000_000 + r * windowSeconds * 1000;
      const allowed = await round(children, { ...config, key: 'shared', requests: 25, concurrency: 8, nowMs });
      expect(allowed.reduce((a, b) => a + b, 0)).toBe(threshold);
    }
  });
});
