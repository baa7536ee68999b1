// The Worker that test/integration/runtimes.test.ts serves with `workerd serve` (a capnp config it
// generates: this module first, then scenario.mjs, http-app.mjs and dist/*.js under the same
// relative names, no Node.js compatibility flag).
//
//   GET /scenario   the scenario's transcript, as run.mjs prints it under Node, Bun and Deno
//   /fetch/*, /hono/*   http-app.mjs
//
// The client address: workerd sets no CF-Connecting-IP (Cloudflare's edge does); the socket of the
// generated config injects `CF-Connecting-IP: 127.0.0.1` into every request it receives, replacing
// any the client sent, as the edge would (it listens on 127.0.0.1 only).
import { createHttpApp } from './http-app.mjs';
import { runScenario } from './scenario.mjs';

/** The app, built in the Worker's global scope, as an app would build it. */
const app = createHttpApp();

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
