// The command line of the runtime checks under Node.js, Bun and Deno (workerd runs worker.mjs):
//
//   node test/runtimes/run.mjs scenario      prints {"runtime", "environment", "transcript"}
//   node test/runtimes/run.mjs serve         serves http-app.mjs on a free port of 127.0.0.1 and
//   bun test/runtimes/run.mjs serve          prints {"runtime", "port"}: @hono/node-server under
//   deno run --allow-net=127.0.0.1 --allow-env=... test/runtimes/run.mjs serve    Node.js, else
//                                            Bun.serve or Deno.serve
//
// The server's store part (store-app.mjs) reaches Redis through `@upstash/redis`'s Node.js entry,
// as documented for Vercel's edge and Deno Deploy: `Redis.fromEnv()`, which reads
// UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN (the front that stays up), and a client of
// STOPPABLE_REDIS_REST_URL with the same token (the front the test stops). Under Deno the client
// also reads UPSTASH_DISABLE_TELEMETRY, UPSTASH_CONSOLE, VERCEL and AWS_REGION when it is made:
// `--allow-env` must name them too (STORE_ENV_NAMES in the test).
//
// A server ends itself after SERVE_SECONDS, should the test that started it not kill it.
import { createHttpApp } from './http-app.mjs';
import { runScenario } from './scenario.mjs';

/** Longest life of a server, in seconds. */
const SERVE_SECONDS = 120;

const { Bun, Deno } = globalThis;
const args = Deno !== undefined ? Deno.args : globalThis.process.argv.slice(2);

/** Which runtime this is, and its version. */
function runtime() {
  if (Bun !== undefined) return { name: 'bun', version: Bun.version };
  if (Deno !== undefined) return { name: 'deno', version: Deno.version.deno };
  return { name: 'node', version: globalThis.process.versions.node };
}

/** Ends the process (the server's listening socket would keep it alive). */
function exit(code) {
  if (Deno !== undefined) Deno.exit(code);
  else globalThis.process.exit(code);
}

/** Prints one line of JSON on standard output. */
function print(value) {
  console.log(JSON.stringify(value));
}

/** The store part's clients (see the file's description). */
async function connectStore() {
  const { Redis } = await import('@upstash/redis');
  const environment = globalThis.process.env;
  return {
    shared: Redis.fromEnv(),
    stoppable: new Redis({ url: environment.STOPPABLE_REDIS_REST_URL, token: environment.UPSTASH_REDIS_REST_TOKEN }),
  };
}

if (args[0] === 'scenario') {
  print({
    runtime: runtime(),
    environment: { process: typeof globalThis.process, buffer: typeof globalThis.Buffer },
    transcript: await runScenario(),
  });
} else if (args[0] === 'serve') {
  // The clients are made before serving (the environment is there from the start); the store
  // part's limiters at its first request (store-app.mjs).
  const clients = await connectStore();
  const app = createHttpApp(() => clients);
  if (Bun !== undefined) {
    // The client address: Bun's server.requestIP(request); Hono's c.env is the server.
    const server = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch: (request, server) => app(request, { address: server.requestIP(request)?.address ?? 'unknown', env: server }),
    });
    print({ runtime: runtime(), port: server.port });
  } else if (Deno !== undefined) {
    // The client address: Deno.serve's ServeHandlerInfo.remoteAddr; Hono's c.env is the info.
    Deno.serve(
      { hostname: '127.0.0.1', port: 0, onListen: ({ port }) => print({ runtime: runtime(), port }) },
      (request, info) => app(request, { address: info.remoteAddr.hostname, env: info }),
    );
  } else {
    // Node.js: @hono/node-server (a devDependency); the client address is the socket's, and
    // Hono's c.env is `{ incoming, outgoing }`.
    const { serve } = await import('@hono/node-server');
    serve(
      {
        hostname: '127.0.0.1',
        port: 0,
        fetch: (request, env) => app(request, { address: env.incoming.socket.remoteAddress ?? 'unknown', env }),
      },
      ({ port }) => print({ runtime: runtime(), port }),
    );
  }
  setTimeout(() => exit(0), SERVE_SECONDS * 1000);
} else {
  throw new Error(`usage: run.mjs scenario|serve, got ${JSON.stringify(args)}`);
}
