// node:http servers for the HTTP tests, on port 0 of 127.0.0.1: listening, closing, and serving a
// Fetch handler (Node 20 has no Fetch server of its own).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Listens on port 0 of 127.0.0.1; the origin. */
export async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Closes `server` and its keep-alive connections. */
export async function close(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}

/**
 * Serves a Fetch handler with `node:http` on port 0 of 127.0.0.1 (Node 20 has no Fetch server of
 * its own): each `IncomingMessage` becomes a `Request` (GET and HEAD only: no body) whose
 * `signal` aborts when the client goes away before the response finished (as Deno, Bun and
 * Node's Fetch servers do; `onClientGone` is then called), and the `Response` is written back. A
 * handler that throws or rejects is answered as a runtime in development would: a 500 whose
 * plain-text body is the error's message (`onError` sees the error first).
 */
export async function serveFetch(
  handler: (request: Request) => Response | Promise<Response>,
  hooks: { readonly onError?: (error: unknown) => void; readonly onClientGone?: () => void } = {},
): Promise<{ readonly origin: string; readonly stop: () => Promise<void> }> {
  const server = createServer((req, res) => {
    void respond(req, res);
  });
  async function respond(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const controller = new AbortController();
    res.once('close', () => {
      if (res.writableFinished) return;
      controller.abort();
      hooks.onClientGone?.();
    });
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (Array.isArray(value)) for (const one of value) headers.append(name, one);
      else if (value !== undefined) headers.set(name, value);
    }
    const request = new Request(`http://${req.headers.host ?? '127.0.0.1'}${req.url ?? '/'}`, {
      method: req.method ?? 'GET',
      headers,
      signal: controller.signal,
    });
    let response: Response;
    try {
      response = await handler(request);
    } catch (error) {
      hooks.onError?.(error);
      response = new Response(error instanceof Error ? error.message : String(error), { status: 500 });
    }
    const body = new Uint8Array(await response.arrayBuffer());
    if (res.destroyed) return;
    const out: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      out[name] = value;
    });
    res.writeHead(response.status, out);
    res.end(body);
  }
  const origin = await listen(server);
  return { origin, stop: () => close(server) };
}
