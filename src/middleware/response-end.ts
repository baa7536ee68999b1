/**
 * When a Node.js `ServerResponse` is over, and how: the one place the Express and Fastify
 * middlewares and the NestJS guard learn whether a response finished or was cut short, for
 * `skipSuccessfulRequests` / `skipFailedRequests` (express-rate-limit's rule: `'finish'` → the
 * response is judged; `'close'` without `'finish'` → failed).
 *
 * Reached through the response's own methods (structural types): no `node:` import.
 *
 * @module
 */

/** @internal What {@link onResponseEnd} needs of a Node.js `ServerResponse`. */
export interface NodeResponse {
  /** The status code sent (or to be sent). */
  readonly statusCode: number;
  /** Whether every byte was handed to the system (`'finish'` was emitted). */
  readonly writableFinished: boolean;
  /** Whether the response was destroyed (its connection closed before or after finishing). */
  readonly destroyed: boolean;
  once(event: 'finish' | 'close', listener: () => void): unknown;
  removeListener(event: 'finish' | 'close', listener: () => void): unknown;
}

/**
 * @internal Calls `done` once when `res` is over: `done(true)` when it finished (`'finish'`: the
 * whole response was handed to the system), `done(false)` when it closed without finishing (the
 * client disconnected, the connection was destroyed, a write failed: an `'error'` is followed by
 * `'close'`). No `'error'` listener is added: an error nobody listens to stays as loud as it was.
 *
 * A response already over when called is settled at once: finished, or destroyed before
 * finishing (the client left while the request was being decided).
 */
export function onResponseEnd(res: NodeResponse, done: (finished: boolean) => void): void {
  if (res.writableFinished) {
    done(true);
    return;
  }
  if (res.destroyed) {
    done(false);
    return;
  }
  const finish = (): void => {
    res.removeListener('close', close);
    done(true);
  };
  const close = (): void => {
    res.removeListener('finish', finish);
    done(false);
  };
  res.once('finish', finish);
  res.once('close', close);
}
