// The command line of the runtime checks under Node.js, Bun and Deno (workerd runs worker.mjs):
//
//   node test/runtimes/run.mjs scenario      prints {"runtime", "environment", "transcript"}
//   bun test/runtimes/run.mjs serve           (Bun or Deno) serves http-app.mjs on a free
//   deno run --allow-net=127.0.0.1 test/runtimes/run.mjs serve     port of 127.0.0.1, prints {"port"}
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

if (args[0] === 'scenario') {
  print({
    runtime: runtime(),
    environment: { process: typeof globalThis.process, buffer: typeof globalThis.Buffer },
    transcript: await runScenario(),
  });
} else if (args[0] === 'serve') {
  const app = createHttpApp();
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
    throw new Error('serve: Bun or Deno only (Node.js servers are tested by the middleware tests)');
  }
  setTimeout(() => exit(0), SERVE_SECONDS * 1000);
} else {
  throw new Error(`usage: run.mjs scenario|serve, got ${JSON.stringify(args)}`);
}
