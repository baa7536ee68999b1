/**
 * The decisions of a replay: a {@link RateLimiter} whose clock is set to each request's time
 * decides the requests in the order given, counting requests and rejections per client, and
 * forgets clients whose window is clear now and then (amortised `cleanUp()`), which changes no
 * decision.
 *
 * @module
 */

import { RateLimiter } from '../rate-limiter.js';
import type { RateLimitStrategy } from '../strategy.js';
import type { ProgressReporter } from './progress.js';

/** The limit a {@link Simulation} applies to every client. */
export interface SimulatedLimit {
  /** Requests allowed per window and client. */
  readonly threshold: number;
  /** The window, in **seconds**. */
  readonly windowSeconds: number;
  /** The algorithm. */
  readonly strategy: RateLimitStrategy<unknown>;
}

/** The requests of a replay, as a `RequestCollector` keeps them: request `i` of `count`. */
export interface ReplayRequests {
  /** Request times in **milliseconds**; the first `count` are read. */
  readonly times: Float64Array;
  /** Client numbers, indexes in `clientNames`; the first `count` are read. */
  readonly clientOf: Uint32Array;
  /** How many requests there are. */
  readonly count: number;
  /** The client of each client number. */
  readonly clientNames: readonly string[];
}

/** What a {@link Simulation} counts, per client number and in all. */
export interface ClientCounts {
  /** Requests of each client. */
  readonly requestsOf: Uint32Array;
  /** Rejected requests of each client. */
  readonly rejectedOf: Uint32Array;
  /** Rejected requests in all. */
  readonly rejected: number;
}

/** A limiter ready to decide the requests of a replay, created by {@link createSimulation}. */
export interface Simulation {
  /** The name of the limiter's strategy, such as `"sliding-window-log"`. */
  readonly strategy: string;
  /**
   * Decides the requests in `order` (indexes into `requests`, in time order), each at its own
   * time, and reports every 65,536 decisions to `progress`. Call once.
   */
  run(requests: ReplayRequests, order: Uint32Array, progress: ProgressReporter): ClientCounts;
}

/**
 * A {@link Simulation} of `limit`: its {@link RateLimiter} is created here, so an invalid limit
 * throws before any input is read.
 *
 * @throws a `RangeError` / `TypeError` from {@link RateLimiter} for an invalid `threshold`
 *   (including one above the strategy's `maxThreshold`) or `windowSeconds`.
 */
export function createSimulation(limit: SimulatedLimit): Simulation {
  const { threshold, windowSeconds, strategy } = limit;
  /** The limiter's clock: the time of the request being decided, in milliseconds. */
  let current = 0;
  const limiter = new RateLimiter({ threshold, windowSeconds, strategy, clock: () => current });
  return {
    strategy: limiter.strategy.name,
    run(requests, order, progress) {
      const { count, times, clientOf, clientNames: names } = requests;
      const requestsOf = new Uint32Array(names.length);
      const rejectedOf = new Uint32Array(names.length);
      let rejected = 0;
      // Forget clients whose window is clear once the limiter tracks many: amortized O(1) per
      // request, and decisions are unchanged (a swept key decides as a fresh one).
      let nextSweep = 1 << 16;
      for (let k = 0; k < count; k++) {
        const i = order[k] as number;
        const client = clientOf[i] as number;
        current = times[i] as number;
        requestsOf[client]!++;
        if (!limiter.allowRequestSync(names[client] as string).allowed) {
          rejectedOf[client]!++;
          rejected++;
        }
        if ((k & 0xffff) === 0xffff) {
          progress.replaying(k + 1, count);
          if (limiter.size >= nextSweep) {
            limiter.cleanUp();
            nextSweep = Math.max(1 << 16, limiter.size * 2);
          }
        }
      }
      return { requestsOf, rejectedOf, rejected };
    },
  };
}
