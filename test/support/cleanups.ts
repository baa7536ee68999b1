// What a test started and must stop after it, in reverse order (clients before their servers),
// whether it passed or not; with a redis-server of the test's own. Shared by the tests that kill
// and restart Redis (redis/disconnected.test.ts, attack-issue23-redis-failfast.test.ts).
import { afterEach } from 'vitest';
import { RedisServer } from './redis-server.js';

/** A cleanup: a function run after the test. */
export type Cleanup = () => Promise<void> | void;

/**
 * Registers (once per file, at its top level) an `afterEach` that runs the cleanups pushed during
 * the test, last first. Returns the list to push to, and `server()`, a redis-server of the test's
 * own, stopped after it.
 */
export function useCleanups(): { readonly cleanups: Cleanup[]; readonly server: () => Promise<RedisServer> } {
  const cleanups: Cleanup[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  return {
    cleanups,
    server: async () => {
      const s = await RedisServer.start();
      cleanups.push(() => s.stop());
      return s;
    },
  };
}
