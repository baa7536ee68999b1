// An outbound API client: stays under someone else's limit (here 10 requests per second per
// API token) by waiting its turn with waitForSlot, rather than sending and getting 429s back.
// Waiters of one token are served in order; a call gives up after 5 s (waiting and fetching),
// and at once if the limiter can tell that no slot comes within those 5 s.
import { RateLimiter } from 'ratewarden';

const limiter = new RateLimiter({ threshold: 10, windowSeconds: 1 });

export async function getJson(token: string, url: string): Promise<unknown> {
  const signal = AbortSignal.timeout(5_000);
  // Rejects with the signal's TimeoutError on timeout, or a RangeError with the code
  // ERR_RATEWARDEN_WAIT_TOO_LONG when the wait would outlast the 5 s; consumes nothing then.
  await limiter.waitForSlot(token, { signal, maxWaitSeconds: 5 });
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}` }, signal });
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return response.json();
}

// The limiter's view, for a metrics endpoint or a log line now and then.
export const throttleStats = () => limiter.stats();
