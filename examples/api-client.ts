// An outbound API client: stays under someone else's limit (here 2 requests per second per API
// token) by waiting its turn with waitForSlot, rather than sending and getting 429s back.
// Waiters of one token are served in order; a call gives up after 5 s (waiting and fetching),
// and at once if the limiter can tell that no slot comes within those 5 s.
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RateLimiter } from 'ratewarden';

const limiter = new RateLimiter({ threshold: 2, windowSeconds: 1 });

async function getJson(token: string, url: string): Promise<unknown> {
  const signal = AbortSignal.timeout(5_000);
  // Rejects with the signal's TimeoutError on timeout, or a RangeError with the code
  // ERR_RATEWARDEN_WAIT_TOO_LONG when the wait would outlast the 5 s; consumes nothing then.
  await limiter.waitForSlot(token, { signal, maxWaitSeconds: 5 });
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}` }, signal });
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return response.json();
}

// The demo: a stand-in for the remote API on a free port of 127.0.0.1, and three calls at once
// with one token: two are sent at once, the third about a second later, when a slot is free.
const api = createServer((request, response) => {
  response.setHeader('content-type', 'application/json');
  response.end(JSON.stringify({ url: request.url }));
});
api.listen(0, '127.0.0.1');
await once(api, 'listening');
const base = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
const items = await Promise.all([1, 2, 3].map((id) => getJson('token-1', `${base}/items/${id}`)));
console.log(items);
console.log(`allowed by the limiter: ${limiter.stats().allowed}`);
api.close();
