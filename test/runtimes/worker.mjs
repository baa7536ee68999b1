// The Worker that test/integration/runtimes.test.ts serves with `workerd serve` (a capnp config it
// generates: this module first, then scenario.mjs, http-app.mjs, dist/*.js and the packages they
// import under the same relative names, no Node.js compatibility flag).
//
//   GET /scenario               the scenario's transcript, as run.mjs prints it under Node, Bun and Deno
//   /fetch/*, /hono/*, /store/*   http-app.mjs
//
// The client address: workerd sets no CF-Connecting-IP (Cloudflare's edge does); the socket of the
// generated config injects `CF-Connecting-IP: 127.0.0.1` into every request it receives, replacing
// any the client sent, as the edge would (it listens on 127.0.0.1 only).
//
// The store part's clients are `@upstash/redis/cloudflare`'s, made from the Worker's env at every
// `/store/` request, as in the README's Worker: `Redis.fromEnv(env)` reads the text bindings
// UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN (the front that stays up), and
// STOPPABLE_REDIS_REST_URL is the front the test stops. Their fetches leave through the config's
// `globalOutbound`, a network service that allows local addresses (workerd's default allows only
// public ones).
import { Redis } from '@upstash/redis/cloudflare';
import { createHttpApp } from './http-app.mjs';
import { runScenario } from './scenario.mjs';

/**
 * The app, built in the Worker's global scope, as an app would build it; its store part makes its
 * clients and limiters at every request (store-app.mjs says why).
 */
const app = createHttpApp(
  (env) => ({
    shared: Redis.fromEnv(env),
    stoppable: new Redis({ url: env.STOPPABLE_REDIS_REST_URL, token: env.UPSTASH_REDIS_REST_TOKEN }),
  }),
  { perRequest: true },
);

export default {
  async fetch(request, env) {
    if (new URL(request.url).pathname === '/scenario') {
      try {
        return Response.json({
          runtime: { name: 'workerd', userAgent: navigator.userAgent },
          environment: { process: typeof globalThis.process, buffer: typeof globalThis.Buffer },
          transcript: await runScenario(),
        });
      } catch (error) {
        return new Response(error instanceof Error ? (error.stack ?? error.message) : String(error), { status: 500 });
      }
    }
    return app(request, { address: request.headers.get('cf-connecting-ip') ?? 'unknown', env });
  },
};
