/**
 * Waiting for a slot (`RateLimiter.waitForSlot`): the per-key FIFO queues of waiters, their
 * timers and abort signals, and the errors of a wait that would take too long. Each attempt is
 * the limiter's one core operation ({@link Decider}); only the head of a key's queue tries.
 *
 * @module
 */
import { watchAbort } from './abort-watch.js';
import { NOT_DECIDED, type Decider } from './decider.js';
import { RateWardenWaitError } from './errors.js';
import type { Quota } from './quota.js';
import type { ParsedWaitOptions, User } from './request.js';
import type { RateLimitResult } from './result.js';
import { MAX_TIMER_MS } from './timers.js';

/** Slack when comparing limiter times (ms) of waits: float noise is not a longer wait. */
const WAIT_EPSILON_MS = 1e-6;

/** One caller of `waitForSlot`, linked into its key's {@link WaitQueue}. */
interface Waiter {
  readonly user: User | string;
  readonly cost: number;
  readonly quota: Quota;
  /** The latest limiter time (ms) at which it accepts a slot; `Infinity` for no bound. */
  readonly deadline: number;
  /** The limiter time (ms) of its call, when it has a bound (`deadline` finite); else 0. */
  readonly start: number;
  readonly maxWaitSeconds: number;
  readonly signal: AbortSignal | undefined;
  readonly resolve: (result: RateLimitResult) => void;
  readonly reject: (error: unknown) => void;
  /** Removes its abort callback (one listener per signal, shared: see `abort-watch.ts`). */
  unwatch: (() => void) | undefined;
  settled: boolean;
  prev: Waiter | undefined;
  next: Waiter | undefined;
}

/**
 * The waiters of one key, first come first served: only the head tries for a slot; when it
 * gets one, gives up or is aborted, the next one tries at once.
 */
interface WaitQueue {
  head: Waiter | undefined;
  tail: Waiter | undefined;
  /** The head's timer, while it waits for `retryAfter`. */
  timer: ReturnType<typeof setTimeout> | undefined;
  /** The limiter time (ms) at which the head tries next; `-Infinity` while it is trying. */
  retryAt: number;
  /** Whether the head's attempt is in flight (a store), or being decided (in memory). */
  busy: boolean;
}

/**
 * @internal The wait queues of one limiter, by key. Timers are looked up on the global object
 * at each call (fake timers apply) and not `unref()`ed: a wait keeps a Node process alive, as a
 * pending `fetch` would.
 */
export class WaitQueues {
  readonly #decider: Decider<unknown>;
  readonly #queues = new Map<string, WaitQueue>();
  #waiting = 0;

  /** @param decider - the limiter's core operation. */
  constructor(decider: Decider<unknown>) {
    this.#decider = decider;
  }

  /** Callers waiting now, over all keys. */
  get waiting(): number {
    return this.#waiting;
  }

  /**
   * Waits until a request of `user` (whose key is `key`) is allowed; see
   * `RateLimiter.waitForSlot` for the semantics and the errors.
   * @throws synchronously for a bad tier or clock (the caller turns it into a rejection).
   */
  wait(user: User | string, key: string, { cost, signal, maxWaitSeconds }: ParsedWaitOptions): Promise<RateLimitResult> {
    if (signal?.aborted === true) return Promise.reject(signal.reason);
    const decider = this.#decider;
    const quota = decider.quotaFor(user, key);
    if (cost > quota.threshold) return Promise.reject(neverAllowed(maxWaitSeconds, quota, cost));
    let queue = this.#queues.get(key);
    let deadline = Infinity;
    let start = 0;
    if (maxWaitSeconds !== Infinity) {
      const now = decider.now(quota);
      start = now;
      deadline = now + maxWaitSeconds * 1000;
      if (queue !== undefined && queue.retryAt > deadline + WAIT_EPSILON_MS) {
        // Queued behind a waiter due later than the deadline: no slot in time.
        let ahead = 0;
        for (let w = queue.head; w !== undefined; w = w.next) ahead++;
        return Promise.reject(waitTooLong({ start: now, now, retryAt: queue.retryAt, maxWaitSeconds, quota, cost }, ahead));
      }
    }
    return new Promise<RateLimitResult>((resolve, reject) => {
      const waiter: Waiter = {
        user,
        cost,
        quota,
        deadline,
        start,
        maxWaitSeconds,
        signal,
        resolve,
        reject,
        unwatch: undefined,
        settled: false,
        prev: undefined,
        next: undefined,
      };
      const fresh = queue === undefined;
      if (queue === undefined) {
        queue = { head: undefined, tail: undefined, timer: undefined, retryAt: -Infinity, busy: false };
        this.#queues.set(key, queue);
      }
      const mine = queue;
      enqueue(mine, waiter);
      this.#waiting++;
      if (signal !== undefined) {
        const onAbort = (): void => {
          const head = mine.head === waiter;
          this.#settle(mine, waiter, false, signal.reason);
          if (head && !mine.busy) {
            // The next waiter tries now (it may ask for less than the aborted one); one on the
            // same signal, not called back yet, is rejected by #pump rather than decided.
            if (mine.timer !== undefined) clearTimeout(mine.timer);
            mine.timer = undefined;
            this.#pump(key, mine);
          }
        };
        try {
          waiter.unwatch = watchAbort(signal, onAbort);
        } catch (error) {
          // A signal-like object whose addEventListener throws: the waiter leaves at once, as
          // if it had never come (the next one, if any, tries now).
          const head = mine.head === waiter;
          this.#settle(mine, waiter, false, error);
          if (head && !mine.busy) this.#pump(key, mine);
          return;
        }
      }
      if (fresh || (mine.head === waiter && !mine.busy)) this.#pump(key, mine);
    });
  }

  /** The key's state was forgotten (`reset`): a waiter waiting for its next slot tries now. */
  retryNow(key: string): void {
    const queue = this.#queues.get(key);
    if (queue?.timer !== undefined) {
      clearTimeout(queue.timer);
      queue.timer = undefined;
      this.#pump(key, queue);
    }
  }

  /**
   * Lets the head of `queue` try for a slot, and the next one after it when it is served or
   * gives up, until one has to wait (a timer), an attempt is in flight, or the queue is empty.
   */
  #pump(key: string, queue: WaitQueue): void {
    const decider = this.#decider;
    for (;;) {
      const waiter = queue.head;
      if (waiter === undefined) {
        if (!queue.busy && this.#queues.get(key) === queue) this.#queues.delete(key);
        return;
      }
      queue.retryAt = -Infinity;
      // Its signal has aborted, its callback not yet called (the signal's other waiters are
      // being called back): it is rejected, never decided.
      let aborted: boolean;
      let reason: unknown;
      try {
        aborted = waiter.signal?.aborted === true;
        if (aborted) reason = waiter.signal?.reason;
      } catch (error) {
        // A signal-like object whose getters throw: the waiter leaves with that error.
        aborted = true;
        reason = error;
      }
      if (aborted) {
        this.#settle(queue, waiter, false, reason);
        continue;
      }
      if (decider.table === undefined) {
        this.#attempt(key, queue, waiter);
        return;
      }
      let result: RateLimitResult;
      // Busy while deciding: a decision listener that aborts this waiter must not pump the
      // queue from inside this loop.
      queue.busy = true;
      try {
        result = decider.decideSync(waiter.user, key, waiter.cost);
      } catch (error) {
        queue.busy = false;
        this.#settle(queue, waiter, false, error);
        continue;
      }
      queue.busy = false;
      // Aborted by a listener of this very decision: it was decided before the abort (an
      // allowed one is recorded); the queue goes on with the next waiter.
      if (waiter.settled) continue;
      if (this.#afterAttempt(key, queue, waiter, result)) return;
    }
  }

  /** The head's attempt with a store; the queue moves on when it settles. */
  #attempt(key: string, queue: WaitQueue, waiter: Waiter): void {
    queue.busy = true;
    // A waiter aborted while its attempt waited for the key's lock decides nothing.
    this.#decider.decideAsync(waiter.user, key, waiter.cost, true, () => waiter.settled).then(
      (result) => {
        queue.busy = false;
        // Aborted while in flight (or before it got the lock: NOT_DECIDED): already rejected;
        // the next waiter tries.
        if (waiter.settled || result === NOT_DECIDED || !this.#afterAttempt(key, queue, waiter, result)) {
          this.#pump(key, queue);
        }
      },
      (error: unknown) => {
        queue.busy = false;
        this.#settle(queue, waiter, false, error);
        this.#pump(key, queue);
      },
    );
  }

  /**
   * Acts on the head's attempt: resolves it when allowed; otherwise rejects it when no wait
   * would do, or sets its timer for `retryAfter`. Returns whether it waits (the queue stops).
   */
  #afterAttempt(key: string, queue: WaitQueue, waiter: Waiter, result: RateLimitResult): boolean {
    if (result.allowed) {
      this.#settle(queue, waiter, true, result);
      return false;
    }
    const retryAfter = result.retryAfter;
    if (!(retryAfter < Infinity)) {
      this.#settle(queue, waiter, false, neverAllowed(waiter.maxWaitSeconds, waiter.quota, waiter.cost));
      return false;
    }
    let now: number;
    try {
      now = this.#decider.now(waiter.quota);
    } catch (error) {
      this.#settle(queue, waiter, false, error);
      return false;
    }
    const retryAt = now + retryAfter * 1000;
    if (retryAt > waiter.deadline + WAIT_EPSILON_MS) {
      this.#settle(queue, waiter, false, waitTooLong({ ...waiter, now, retryAt }, 0));
      return false;
    }
    // The waiters behind it cannot be served before it: those who will not wait that long
    // learn it now rather than at their deadline.
    let ahead = 1;
    for (let w = waiter.next; w !== undefined; ) {
      const next = w.next;
      if (retryAt > w.deadline + WAIT_EPSILON_MS) {
        this.#settle(queue, w, false, waitTooLong({ ...w, now, retryAt }, ahead));
      } else {
        ahead++;
      }
      w = next;
    }
    queue.retryAt = retryAt;
    queue.timer = setTimeout(() => {
      queue.timer = undefined;
      this.#pump(key, queue);
    }, delayMs(retryAfter));
    return true;
  }

  /** Settles a waiter once: takes it out of its queue, removes its abort listener. */
  #settle(queue: WaitQueue, waiter: Waiter, allowed: true, outcome: RateLimitResult): void;
  #settle(queue: WaitQueue, waiter: Waiter, allowed: false, outcome: unknown): void;
  #settle(queue: WaitQueue, waiter: Waiter, allowed: boolean, outcome: unknown): void {
    if (waiter.settled) return;
    waiter.settled = true;
    unlink(queue, waiter);
    this.#waiting--;
    if (waiter.unwatch !== undefined) {
      waiter.unwatch();
      waiter.unwatch = undefined;
    }
    if (allowed) waiter.resolve(outcome as RateLimitResult);
    else waiter.reject(outcome);
  }
}

/** Seconds for a message: up to the microsecond, without float noise. */
function seconds(value: number): string {
  return `${Math.round(value * 1e6) / 1e6} s`;
}

function quotaText(quota: Quota): string {
  return `the limit is ${quota.threshold} request${quota.threshold === 1 ? '' : 's'} per ${seconds(quota.windowSeconds)}`;
}

/** What {@link waitTooLong} reports: a bounded waiter, and when its slot could come. */
interface TooLong {
  /** The limiter time (ms) of the waiter's call. */
  readonly start: number;
  /** The limiter time (ms) now. */
  readonly now: number;
  /** The earliest limiter time (ms) of its slot (of the first waiter ahead's, when some are). */
  readonly retryAt: number;
  readonly maxWaitSeconds: number;
  readonly quota: Quota;
  readonly cost: number;
}

/**
 * The error of a wait that would take longer than `maxWaitSeconds`. The message gives the wait
 * that exceeds the bound: counted from the call, so including what the waiter has waited
 * already (behind the waiters ahead of it, or for an earlier retry) and, with `ahead` waiters
 * still ahead, as a lower bound. Its `retryAfter` is the part still to come, from now.
 */
function waitTooLong({ start, now, retryAt, maxWaitSeconds, quota, cost }: TooLong, ahead: number): RateWardenWaitError {
  const retryAfter = (retryAt - now) / 1000;
  const total = (retryAt - start) / 1000;
  const waited = now > start ? (now - start) / 1000 : 0;
  const atLeast = ahead > 0 ? 'at least ' : '';
  const behind = ahead > 0 ? ` behind ${ahead} earlier waiter${ahead === 1 ? '' : 's'} for the key` : '';
  // Rounded as shown: a wait shown as 0 s so far is no wait so far.
  const wait =
    Math.round(waited * 1e6) === 0
      ? `${atLeast}${seconds(total)}${ahead > 0 ? ` (${behind.slice(1)})` : ''}`
      : `${atLeast}${seconds(total)} from the call (${seconds(waited)} waited so far, ${atLeast}${seconds(retryAfter)} more${behind})`;
  return new RateWardenWaitError(
    `Expected a slot within \`maxWaitSeconds\` (${seconds(maxWaitSeconds)}), but waiting for one would take ${wait}: ${quotaText(quota)}`,
    retryAfter,
    maxWaitSeconds,
    quota,
    cost,
  );
}

/** The error of a request whose cost exceeds the quota: no wait would help. */
function neverAllowed(maxWaitSeconds: number, quota: Quota, cost: number): RateWardenWaitError {
  return new RateWardenWaitError(
    `Expected a request the limit can allow, but one of cost ${cost} never can (${quotaText(quota)}): waiting would not help`,
    Infinity,
    maxWaitSeconds,
    quota,
    cost,
  );
}

/**
 * @internal The timer delay, in whole milliseconds, for a wait of `retryAfter` seconds: never
 * shorter (a timer that fires early would find no slot yet and wait again), at least 1 ms.
 * `retryAfter` is rounded to the microsecond first, so that 0.03 s is 30 ms, not 31.
 */
export function delayMs(retryAfter: number): number {
  const ms = Math.ceil(Math.round(retryAfter * 1e6) / 1e3);
  return ms < 1 ? 1 : ms > MAX_TIMER_MS ? MAX_TIMER_MS : ms;
}

/** Appends `waiter` to `queue`. */
function enqueue(queue: WaitQueue, waiter: Waiter): void {
  waiter.prev = queue.tail;
  if (queue.tail === undefined) queue.head = waiter;
  else queue.tail.next = waiter;
  queue.tail = waiter;
}

/** Takes `waiter` out of `queue`, wherever it is, in O(1). */
function unlink(queue: WaitQueue, waiter: Waiter): void {
  const { prev, next } = waiter;
  if (prev === undefined) {
    if (queue.head === waiter) queue.head = next;
  } else {
    prev.next = next;
  }
  if (next === undefined) {
    if (queue.tail === waiter) queue.tail = prev;
  } else {
    next.prev = prev;
  }
  waiter.prev = undefined;
  waiter.next = undefined;
}
