/**
 * The one path of every Redis decision: single decisions (`consume` and `peek` of a Redis
 * strategy) and `RateLimitGroup` decisions alike are **units** (entries decided all or nothing,
 * `./script.ts`), queued per hash slot, sent in micro-batches, each unit with its own deadline.
 *
 * **Micro-batching.** A unit is sent at once when nothing of its slot is in flight or queued (a
 * lone caller waits for nothing). Otherwise it queues, and the queue is sent as one `EVALSHA` at
 * the end of the tick (after the promise callbacks already due, so that callers issuing their
 * next decision join it) if fewer than {@link MAX_IN_FLIGHT} calls of the slot are in flight, else
 * when one returns; a full batch (`batchSize` entries: the smallest of its units' strategies', or
 * {@link MAX_BATCH_MEMBERS} sorted-set members to write, so that one script never holds Redis
 * long) goes at once while fewer than {@link MAX_CALLS_IN_FLIGHT} are. **Never more than
 * {@link MAX_CALLS_IN_FLIGHT} calls of a slot are outstanding** — whatever the load, and however
 * long Redis hangs — so the client's command queue stays bounded. On Redis Cluster the slot is
 * the key's (CRC16 of its hash tag, as Redis computes it): every key of one script must share a
 * slot.
 *
 * **Deadlines, one instant on both sides.** A unit's deadline is its submission plus its
 * timeout: units with the same timeout submitted in one tick, within {@link JOIN_MS} of the first,
 * share one timer, and then one deadline, the first one's (so a timeout may end up to that much
 * sooner, never later). The same instant is what the server is told, less the reply's allowance
 * ({@link replyAllowanceMs}): a script that starts later writes nothing for the unit. When the
 * timer fires, a unit still queued fails at once, unsent; a unit in flight fails after the
 * replies that have already reached this process are read (`setImmediate`, after the poll
 * phase; a `setTimeout` of 0 where the runtime has none), so that an event loop that was
 * blocked past the deadline does not report a timeout for a decision whose answer was waiting
 * in the socket. A unit whose deadline has passed when its
 * turn to be sent comes fails without being sent. Settled units are released: nothing waits on a
 * handshake or a call but the units still pending.
 *
 * **A disconnected client fails fast.** While the client is known to be disconnected (the
 * adapter's `connected()` is `false`: node-redis or ioredis reconnecting), a new unit fails at
 * once by its limits' failure policies with a `RateWardenRedisUnavailableError`, never queued,
 * and takes with it every unit still queued on the client (unsent: behind the handshake or the
 * calls in flight); a queued unit whose turn to be sent comes then fails the same way, unsent (the link's
 * `run` checks before each call), rather than waiting in the client's offline queue until its
 * deadline. One check per unit and per call: a property read on the client.
 *
 * Why one file of about 770 lines (a third of it comments): the queues, the timers and the
 * settling share one invariant — a unit is in exactly one place (queued in its slot, in one call
 * in flight, or settled), and each move between places updates the slot's counts and the timer's
 * — which split files would each have to re-establish. The wire format (`./protocol.ts`), the
 * script (`./script.ts`), the connection (`./server-link.ts`) and the failure policies
 * (`./failure-policy.ts`) are apart already.
 *
 * @module
 */
import keySlot from 'cluster-key-slot';
import { RateWardenRedisCommandError, RateWardenRedisReplyError, RateWardenRedisTimeoutError, RateWardenRedisUnavailableError } from '../errors.js';
import type { Quota } from '../quota.js';
import type { RateLimitResult } from '../result.js';
import type { StoreReservation } from '../store.js';
import { MAX_TIMER_MS, afterCallbacks, afterInput, unref } from '../timers.js';
import type { BlockCache } from './block-cache.js';
import { PER_ENTRY, WAIT_COMMAND_ERROR, WAIT_PAST_DEADLINE, describeReply, entryResult, layCall, toNumber, type Entry } from './protocol.js';
import { notifyError, type RedisLimit } from './redis-limit.js';
import { perLink, type ServerLink } from './server-link.js';

/**
 * How many calls of one slot may be in flight before a batch that is not full waits for one to
 * return: two, so that Redis decides one batch while this process sends or settles the other.
 */
export const MAX_IN_FLIGHT = 2;

/**
 * The most calls of one slot ever in flight: full batches go at once up to this many, so that
 * many callers (or `batchSize: 1`) keep Redis busy; beyond it everything waits for a call to
 * return, however long Redis hangs, so the client's command queue stays bounded.
 */
export const MAX_CALLS_IN_FLIGHT = 16;

/** The most sorted-set members (sliding-window-log units) one call may write. */
export const MAX_BATCH_MEMBERS = 1_000;

/** The shortest expiry set in `time: "limiter"` mode (Redis expires on its own clock), ms. */
export const LIMITER_TIME_MIN_EXPIRY_MS = 3_600_000;

/** Units submitted within this many milliseconds of a timer's first (same timeout) share it. */
export const JOIN_MS = 1;

/**
 * How much sooner than a unit's deadline the script must start, in milliseconds, so that its
 * reply reaches this process before the unit's timer fires: 1 ms for Node's timers (which count
 * from the start of the current millisecond: `setTimeout(f, 5)` may run `f` when
 * `performance.now()` says 4.2 ms have passed, measured here), plus a quarter of the timeout, at
 * most 10 ms, for the script's run and the reply's transit (a batch of 1,000 log units runs in a
 * few milliseconds; a reply crosses a LAN in well under one); and never more than half the
 * timeout, so that the shortest timeouts still leave the server some time to start.
 */
export function replyAllowanceMs(timeoutMs: number): number {
  return Math.min(1 + Math.min(timeoutMs / 4, 10), timeoutMs / 2);
}

/**
 * The timer's delay for a timeout: whole milliseconds, rounded up (a fraction would be truncated),
 * so that fake timers advanced by the timeout fire it.
 */
export function timerDelayMs(timeoutMs: number): number {
  return Math.min(Math.ceil(timeoutMs), MAX_TIMER_MS);
}

/**
 * What a unit does: a decision (`consume`, `peek`, a group's), a reservation (a decision with
 * tickets), or one of the refunding store's other operations (one entry each).
 */
export type UnitKind = 'decide' | 'reserve' | 'penalty' | 'refund' | 'block' | 'delete';

/**
 * @internal What a Redis strategy needs to refund a reservation: the key, the time its units
 * were recorded at (ticks of 2^-10 ms, on the clock that decided), its reservation id (in its log
 * members' names, or with its GCRA state), and for the log the first member's number and the
 * cost. Opaque to the limiter.
 */
export interface RedisTicket {
  readonly redisKey: string;
  readonly ticks: number;
  readonly first: number;
  readonly cost: number;
  readonly id: string;
}

/**
 * @internal The ticket of a reservation that the failure policy decided (Redis did not answer):
 * nothing of it is in Redis, so its refund gives nothing back (`false`).
 */
export const DEGRADED_TICKET: unique symbol = Symbol('ratewarden.redis.degradedTicket');

/** The values of a reservation's ticket in a reply, per entry: its time and first member. */
const TICKET_VALUES = 2;

/**
 * This process's part of reservation ids (random, 21 bits) and a counter (32 bits): an id below
 * 2^53, unique in this process until four billion reservations have been made, and across
 * processes but for one chance in two million per pair of processes (and then only on the same
 * key at the same counter).
 */
const RESERVATION_BASE = Math.floor(Math.random() * 2 ** 21) * 2 ** 32;
let reservations = 0;

/** A new reservation id, as the script receives it (a decimal integer below 2^53). */
function reservationId(): string {
  reservations = (reservations + 1) % 2 ** 32;
  return String(RESERVATION_BASE + reservations);
}

/** Where a unit is. */
const QUEUED = 0;
const SENT = 1;
const DONE = 2;

/** @internal One limit's share of a unit, with what the queue needs beyond the layout. */
export interface QueuedEntry extends Entry {
  readonly limit: RedisLimit;
  /** The user id (the block cache's and the failure policy's key). */
  readonly key: string;
}

/** One unit, from submission until settled. */
interface Unit {
  readonly entries: readonly QueuedEntry[];
  readonly record: boolean;
  readonly kind: UnitKind;
  /** The operation as laid (`undefined`: a plain decision, `record` says which). */
  readonly op: string | undefined;
  /** A reservation's id; `""` for other units. */
  readonly rid: string;
  /** A group's unit (settled with every entry's result) or a single decision's. */
  readonly group: boolean;
  /** The single decision's block cache, if its strategy has one (groups neither read nor feed it). */
  readonly cache: BlockCache | undefined;
  readonly timeoutMs: number;
  readonly batchSize: number;
  /** Sorted-set members it may write. */
  readonly members: number;
  /** `performance.now()` at submission, ms. */
  readonly startMs: number;
  /** Its deadline in this process's clock (the timer's), ms; `Infinity` without a timeout. */
  deadlineMs: number;
  /** Its deadline as sent, in the server's microseconds. */
  deadlineUs: number | undefined;
  state: typeof QUEUED | typeof SENT | typeof DONE;
  bucket: Bucket | undefined;
  readonly resolve: (value: never) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Units that share one timer: the same timeout, submitted in the same tick of the event loop
 * and within {@link JOIN_MS} of the first (an event loop blocked longer starts a new one).
 */
interface Bucket {
  readonly startMs: number;
  readonly timeoutMs: number;
  readonly members: Unit[];
  /** Members not settled yet. */
  left: number;
  timer: ReturnType<typeof setTimeout> | undefined;
  /** Units may still join it (its tick is not over). */
  open: boolean;
}

/** The units of one hash slot: queued, and how many calls are in flight. */
interface Slot {
  queue: Unit[];
  /** The first entry of {@link queue} not yet taken. */
  head: number;
  /** Queued units not settled. */
  live: number;
  inFlight: number;
  /** A flush is scheduled (after the current promise callbacks). */
  scheduled: boolean;
}

/** Queues, by link: every strategy on one client and time mode shares one. */
const queues = new WeakMap<ServerLink, DecisionQueue>();

/** @internal The decision queue of the strategies on `link`'s client and time mode. */
export function queueFor(link: ServerLink): DecisionQueue {
  return perLink(queues, link, (l) => new DecisionQueue(l));
}

/** @internal See the module description. */
export class DecisionQueue {
  readonly #link: ServerLink;
  readonly #cluster: boolean;
  readonly #redisTime: boolean;
  readonly #minExpiryMs: number;
  /** Standalone: the one slot. */
  readonly #slot: Slot = newSlot();
  /** Cluster: slots by number. */
  readonly #slots = new Map<number, Slot>();
  /** The bucket units with a timeout (ms) join now. */
  readonly #buckets = new Map<number, Bucket>();

  constructor(link: ServerLink) {
    this.#link = link;
    this.#cluster = link.cluster;
    this.#redisTime = link.time === 'redis';
    this.#minExpiryMs = this.#redisTime ? 1 : LIMITER_TIME_MIN_EXPIRY_MS;
  }

  /**
   * Decides one request on one Redis limit (records it when `record` and allowed), through its
   * failure policy when Redis fails.
   */
  single(limit: RedisLimit, cache: BlockCache | undefined, key: string, nowMs: number, cost: number, quota: Quota, record: boolean): Promise<RateLimitResult> {
    // Until it settles, the cache neither answers for the key nor keeps an older refusal of it.
    const feeds = record && cache !== undefined;
    if (feeds) cache.begin(key);
    const algorithm = limit.algorithm;
    const entry: QueuedEntry = { algorithm, redisKey: limit.redisKey(key), nowMs, cost, quota, limit, key };
    return this.#unit([entry], record, false, feeds ? cache : undefined, limit.timeoutSeconds, limit.batchSize, record ? algorithm.membersPerUnit * cost : 0);
  }

  /** A single decision that records, with its ticket ({@link single} otherwise). */
  reserve(limit: RedisLimit, cache: BlockCache | undefined, key: string, nowMs: number, cost: number, quota: Quota): Promise<StoreReservation> {
    if (cache !== undefined) cache.begin(key);
    const algorithm = limit.algorithm;
    const entry: QueuedEntry = { algorithm, redisKey: limit.redisKey(key), nowMs, cost, quota, limit, key };
    return this.#unit([entry], true, false, cache, limit.timeoutSeconds, limit.batchSize, algorithm.membersPerUnit * cost, 'reserve');
  }

  /**
   * One of the refunding store's operations on one key: a penalty of `amount` points (resolves
   * with a peek of cost 1 right after), a refund of `amount` units of `ticket`'s reservation
   * (resolves whether they were given back), a block of `amount` ms, a delete (resolves whether
   * anything was there). Not a decision: the block cache neither answers nor keeps it.
   */
  operate(limit: RedisLimit, kind: 'penalty' | 'refund' | 'block' | 'delete', key: string, nowMs: number, amount: number, quota: Quota, ticket?: RedisTicket): Promise<unknown> {
    const algorithm = limit.algorithm;
    const redisKey = limit.redisKey(key);
    // A penalty's reply is a peek of cost 1 (read as such); the others' are not results.
    const entry: QueuedEntry = { algorithm, redisKey, nowMs, cost: amount, quota, limit, key };
    let op: string;
    let members = 0;
    if (kind === 'penalty') {
      op = 'p';
      members = algorithm.membersPerUnit * amount;
    } else if (kind === 'refund') {
      const t = ticket as RedisTicket;
      op = `u${t.ticks} ${t.first} ${t.cost} ${t.id}`;
    } else op = kind === 'block' ? 'b' : 'x';
    return this.#unit([entry], true, false, undefined, limit.timeoutSeconds, limit.batchSize, members, kind, op);
  }

  /**
   * Decides a group's entries (their keys in one slot) all or nothing: every entry checked and,
   * only when `record` and every one allows, every one recorded. Times out after the longest of
   * the limits' timeouts; fails by the limits' failure policies (all or nothing across them).
   */
  group(entries: readonly QueuedEntry[], record: boolean): Promise<RateLimitResult[]>;
  /** {@link group}, recording, with each entry's ticket. */
  group(entries: readonly QueuedEntry[], record: true, reserve: true): Promise<StoreReservation[]>;
  group(entries: readonly QueuedEntry[], record: boolean, reserve = false): Promise<RateLimitResult[] | StoreReservation[]> {
    let timeoutSeconds = 0;
    let batchSize = Infinity;
    let members = 0;
    for (const e of entries) {
      if (e.limit.timeoutSeconds > timeoutSeconds) timeoutSeconds = e.limit.timeoutSeconds;
      if (e.limit.batchSize < batchSize) batchSize = e.limit.batchSize;
      if (record) members += e.algorithm.membersPerUnit * e.cost;
    }
    return this.#unit(entries, record, true, undefined, timeoutSeconds, batchSize, members, reserve ? 'reserve' : 'decide');
  }

  /** A new unit, submitted: its promise settles with its result (single) or results (group). */
  #unit<T>(
    entries: readonly QueuedEntry[],
    record: boolean,
    group: boolean,
    cache: BlockCache | undefined,
    timeoutSeconds: number,
    batchSize: number,
    members: number,
    kind: UnitKind = 'decide',
    op?: string,
  ): Promise<T> {
    const rid = kind === 'reserve' ? reservationId() : '';
    return new Promise<T>((resolve, reject) => {
      this.#submit({
        entries,
        record,
        kind,
        op: kind === 'reserve' ? `v${rid}` : op,
        rid,
        group,
        cache,
        timeoutMs: timeoutSeconds * 1000,
        batchSize,
        members,
        startMs: performance.now(),
        deadlineMs: Infinity,
        deadlineUs: undefined,
        state: QUEUED,
        bucket: undefined,
        resolve,
        reject,
      });
    });
  }

  #submit(unit: Unit): void {
    const link = this.#link;
    if (!link.connected()) {
      // The client is known to be disconnected: the unit fails now, by its policy, unqueued; and
      // so do the units still queued here (never sent: behind the handshake, or behind the calls
      // in flight), which would otherwise wait for Redis or their timeout.
      const error = new RateWardenRedisUnavailableError();
      this.#fail(unit, error, undefined);
      this.#eachSlot((slot) => {
        for (let i = slot.head; i < slot.queue.length; i++) {
          const u = slot.queue[i] as Unit;
          if (u.state === QUEUED) this.#fail(u, error, slot);
        }
      });
      return;
    }
    const timed = unit.timeoutMs !== Infinity;
    if (timed) this.#watch(unit);
    const slot = this.#cluster ? this.#slotOf((unit.entries[0] as QueuedEntry).redisKey) : this.#slot;
    if (slot.inFlight === 0 && slot.live === 0 && (!timed || link.offsetUs !== undefined)) {
      // The slot is idle: this unit goes now, alone, in this tick.
      this.#send(slot, [unit]);
      return;
    }
    slot.queue.push(unit);
    slot.live++;
    if (timed && link.offsetUs === undefined) {
      // The server's clock is not known yet: the handshake first (one, shared), then the queues.
      this.#shake(unit);
      return;
    }
    if (slot.live >= unit.batchSize) this.#flush(slot); // a full batch goes now, if there is room
    else if (slot.inFlight < MAX_IN_FLIGHT) this.#schedule(slot); // else the next call to return sends it
  }

  /** Starts the handshake unless one is in flight; when it answers, every queue goes. */
  #shake(unit: Unit): void {
    const link = this.#link;
    if (link.shaking) return;
    link.handshake(unit.entries.map((e) => e.redisKey)).then(
      () => {
        this.#eachSlot((slot) => {
          if (slot.live > 0) this.#flush(slot);
        });
      },
      (error: unknown) => {
        // The units that waited for it fail with its error (the next unit starts another).
        this.#eachSlot((slot) => {
          for (let i = slot.head; i < slot.queue.length; i++) {
            const u = slot.queue[i] as Unit;
            if (u.state === QUEUED && u.timeoutMs !== Infinity) this.#fail(u, error, slot);
          }
          if (slot.live > 0) this.#flush(slot);
        });
      },
    );
  }

  #eachSlot(visit: (slot: Slot) => void): void {
    if (this.#cluster) for (const slot of this.#slots.values()) visit(slot);
    else visit(this.#slot);
  }

  /** Flushes `slot`'s queue once the promise callbacks already due have run (once per tick). */
  #schedule(slot: Slot): void {
    if (slot.scheduled) return;
    slot.scheduled = true;
    afterCallbacks(() => {
      slot.scheduled = false;
      this.#flush(slot);
    });
  }

  #slotOf(redisKey: string): Slot {
    const n = keySlot(redisKey);
    let slot = this.#slots.get(n);
    if (slot === undefined) {
      slot = newSlot();
      this.#slots.set(n, slot);
    }
    return slot;
  }

  /**
   * Sends the queue's units that are still pending, in order, in batches within the bounds,
   * while there is room in flight; fails, unsent, those whose deadline has passed.
   */
  #flush(slot: Slot): void {
    const link = this.#link;
    let now = 0;
    while (slot.live > 0 && slot.inFlight < MAX_CALLS_IN_FLIGHT) {
      const queue = slot.queue;
      const batch: Unit[] = [];
      let entries = 0;
      let members = 0;
      let limit = Infinity;
      let full = false;
      let i = slot.head;
      for (; i < queue.length; i++) {
        const u = queue[i] as Unit;
        if (u.state !== QUEUED) continue;
        if (u.timeoutMs !== Infinity) {
          if (link.offsetUs === undefined) break; // waits for the handshake
          if (now === 0) now = performance.now();
          if (now >= u.deadlineMs - replyAllowanceMs(u.timeoutMs)) {
            // The server would refuse it: it fails now, unsent.
            this.#fail(u, new RateWardenRedisTimeoutError(u.timeoutMs / 1000), slot);
            continue;
          }
        }
        const size = u.entries.length;
        const cap = Math.min(limit, u.batchSize);
        if (batch.length > 0 && (entries + size > cap || members + u.members > MAX_BATCH_MEMBERS)) {
          full = true;
          break;
        }
        batch.push(u);
        entries += size;
        members += u.members;
        limit = cap;
        if (entries >= limit) {
          full = true;
          i++;
          break;
        }
      }
      // A batch that is not full waits while two calls are in flight (more may join it).
      if (batch.length === 0 || (!full && slot.inFlight >= MAX_IN_FLIGHT)) break;
      for (const u of batch) u.state = SENT;
      slot.live -= batch.length;
      slot.head = i;
      this.#send(slot, batch);
    }
    compact(slot);
  }

  /** One script call for `batch` (every unit of it counted sent). */
  #send(slot: Slot, batch: Unit[]): void {
    slot.inFlight++;
    const link = this.#link;
    let recording = false;
    for (const u of batch) {
      u.state = SENT;
      if (u.record) recording = true;
      if (u.timeoutMs !== Infinity) {
        // The server must start it before its deadline less the reply's allowance.
        u.deadlineUs = Math.floor((u.deadlineMs - replyAllowanceMs(u.timeoutMs)) * 1000 + (link.offsetUs as number));
      }
    }
    const first = (batch[0] as Unit).entries[0] as QueuedEntry;
    const token = recording && link.resends ? link.tokenFor(first.redisKey) : undefined;
    const { keys, args } = layCall(batch, this.#redisTime, this.#minExpiryMs, token);
    link.run(keys, args, () => batch.every((u) => u.state === DONE)).then(
      (reply) => {
        this.#returned(slot);
        this.#settle(batch, reply);
      },
      (error: unknown) => {
        this.#returned(slot);
        for (const u of batch) this.#fail(u, error, undefined);
      },
    );
  }

  /** After a call of `slot` returned: the queue goes once the callbacks it settled have run. */
  #returned(slot: Slot): void {
    slot.inFlight--;
    if (slot.live > 0) this.#schedule(slot);
  }

  /** Settles each unit of `batch` from the script's reply. */
  #settle(batch: readonly Unit[], reply: unknown): void {
    const link = this.#link;
    if (!Array.isArray(reply)) {
      this.#failAll(batch, new RateWardenRedisReplyError(describeReply(reply)));
      return;
    }
    let n = 0;
    let ticketValues = 0;
    for (const u of batch) {
      n += u.entries.length;
      if (u.kind === 'reserve') ticketValues += u.entries.length * TICKET_VALUES;
    }
    if (reply.length === 2 && toNumber(reply[0]) === -1 && batch.every((u) => u.deadlineUs !== undefined) && link.learn(reply[1])) {
      // The script started after the latest deadline: nothing was written.
      for (const u of batch) this.#fail(u, new RateWardenRedisTimeoutError(u.timeoutMs / 1000), undefined);
      return;
    }
    if (reply.length !== n * PER_ENTRY + ticketValues + 1 || !link.learn(reply[n * PER_ENTRY + ticketValues])) {
      this.#failAll(batch, new RateWardenRedisReplyError(describeReply(reply)));
      return;
    }
    const redisTime = this.#redisTime;
    let o = 0;
    let t = n * PER_ENTRY;
    for (const u of batch) {
      const entries = u.entries;
      const at = o;
      o += entries.length * PER_ENTRY;
      const tickets = t;
      if (u.kind === 'reserve') t += entries.length * TICKET_VALUES;
      if (u.state === DONE) continue;
      const wait0 = toNumber(reply[at]);
      if (wait0 === WAIT_COMMAND_ERROR && typeof reply[at + 1] === 'string' && reply[at + 1] !== '') {
        this.#fail(u, new RateWardenRedisCommandError(reply[at + 1] as string), undefined);
        continue;
      }
      if (wait0 === WAIT_PAST_DEADLINE && u.deadlineUs !== undefined) {
        // Its deadline had passed when the script reached it: nothing was written for it.
        this.#fail(u, new RateWardenRedisTimeoutError(u.timeoutMs / 1000), undefined);
        continue;
      }
      const kind = u.kind;
      if (kind === 'refund' || kind === 'block' || kind === 'delete') {
        const value = toNumber(reply[at]);
        if (!Number.isSafeInteger(value) || value < 0 || (kind === 'refund' && value > 1) || (kind === 'delete' && value > 2)) {
          this.#fail(u, new RateWardenRedisReplyError(describeReply(reply.slice(at, at + PER_ENTRY))), undefined);
          continue;
        }
        this.#done(u, undefined);
        u.resolve((kind === 'block' ? undefined : value > 0) as never);
        continue;
      }
      const results: RateLimitResult[] = [];
      let allowed = true;
      for (let j = 0; j < entries.length; j++) {
        const b = at + j * PER_ENTRY;
        // A penalty's reply is a peek of cost 1.
        const entry = kind === 'penalty' ? { ...(entries[j] as QueuedEntry), cost: 1 } : (entries[j] as QueuedEntry);
        const result = entryResult(entry, toNumber(reply[b]), toNumber(reply[b + 1]), toNumber(reply[b + 2]), toNumber(reply[b + 3]), redisTime);
        if (result === undefined) break;
        if (!result.allowed) allowed = false;
        results.push(result);
      }
      if (results.length !== entries.length) {
        this.#fail(u, new RateWardenRedisReplyError(describeReply(reply.slice(at, at + entries.length * PER_ENTRY))), undefined);
        continue;
      }
      const cache = u.cache;
      if (cache !== undefined) {
        const e = entries[0] as QueuedEntry;
        const result = results[0] as RateLimitResult;
        // Recorded here: a cached refusal of the key no longer describes its state.
        if (allowed) cache.forget(e.key);
        else if (result.retryAfter !== Infinity) {
          const shift = toNumber(reply[at + 3]);
          cache.remember(e.key, redisTime ? u.startMs : e.nowMs, shift, e.cost, e.quota, toNumber(reply[at]), toNumber(reply[at + 1]), toNumber(reply[at + 2]));
        }
      }
      this.#done(u, undefined);
      if (kind === 'reserve') {
        const reserved = results.map((result, j): StoreReservation => {
          if (!allowed) return { result, ticket: undefined };
          const e = entries[j] as QueuedEntry;
          const ticks = toNumber(reply[tickets + j * TICKET_VALUES]);
          const first = toNumber(reply[tickets + j * TICKET_VALUES + 1]);
          const ticket: RedisTicket = { redisKey: e.redisKey, ticks, first, cost: e.cost, id: u.rid };
          return { result, ticket: Object.freeze(ticket) };
        });
        if (allowed && !reserved.every((r) => Number.isSafeInteger((r.ticket as RedisTicket).ticks) && Number.isSafeInteger((r.ticket as RedisTicket).first))) {
          // Recorded, but the ticket is unreadable: reported as such (the reservation cannot be
          // refunded; a tampered reply).
          u.reject(new RateWardenRedisReplyError(describeReply(reply.slice(tickets, tickets + entries.length * TICKET_VALUES))));
          continue;
        }
        u.resolve((u.group ? reserved : reserved[0]) as never);
        continue;
      }
      if (u.group) u.resolve(results as never);
      else u.resolve(results[0] as never);
    }
  }

  #failAll(batch: readonly Unit[], error: unknown): void {
    for (const u of batch) this.#fail(u, error, undefined);
  }

  /**
   * Settles `u` by its limits' failure policies (unless already settled): for a single decision,
   * its limit's; for a group, each limit's, all or nothing (any `"throw"` rejects; else each
   * limit is checked by its policy and, only if all allow and the unit records, recorded).
   * @param slot - the slot whose queue holds `u`, when it is still queued there.
   */
  #fail(u: Unit, error: unknown, slot: Slot | undefined): void {
    if (u.state === DONE) return;
    this.#done(u, slot);
    const entries = u.entries;
    const keys = entries.map((e) => e.redisKey);
    const limits = new Set(entries.map((e) => e.limit));
    // The user's hook runs after this step, not inside it: a hook that decides again on this
    // client would otherwise re-enter the queue while a flush holds units it has taken.
    queueMicrotask(() => {
      for (const l of limits) notifyError(l, error, keys);
    });
    const kind = u.kind;
    // Penalties, blocks and deletes have no degraded outcome: they fail under every policy.
    if (kind === 'penalty' || kind === 'block' || kind === 'delete') {
      u.reject(error);
      return;
    }
    for (const l of limits) {
      if (l.onFailure === 'throw') {
        u.reject(error);
        return;
      }
    }
    // A refund under any other policy gives nothing back: `false` (never more permissive).
    if (kind === 'refund') {
      u.resolve(false as never);
      return;
    }
    // A reservation decided by the policy: its ticket refunds nothing (Redis never saw it).
    const reserve = kind === 'reserve';
    const ticketed = (results: RateLimitResult[]): StoreReservation[] => {
      const allowed = results.every((r) => r.allowed);
      return results.map((result) => ({ result, ticket: allowed ? DEGRADED_TICKET : undefined }));
    };
    if (!u.group) {
      const e = entries[0] as QueuedEntry;
      const result = e.limit.failure.decide(e, u.record);
      u.resolve((reserve ? (ticketed([result])[0] as StoreReservation) : result) as never);
      return;
    }
    const checked = entries.map((e) => e.limit.failure.decide(e, false));
    let results = checked;
    if (u.record && checked.every((r) => r.allowed)) results = entries.map((e) => e.limit.failure.decide(e, true));
    u.resolve((reserve ? ticketed(results) : results) as never);
  }

  /** Marks `u` settled: its cache's in-flight count, its timer, its slot's queue. */
  #done(u: Unit, slot: Slot | undefined): void {
    if (u.state === QUEUED && slot !== undefined) slot.live--;
    u.state = DONE;
    if (u.cache !== undefined) u.cache.end((u.entries[0] as QueuedEntry).key);
    const bucket = u.bucket;
    if (bucket !== undefined && --bucket.left === 0 && !bucket.open && bucket.timer !== undefined) {
      clearTimeout(bucket.timer);
      bucket.timer = undefined;
    }
  }

  /**
   * Puts `u` under a timer: the current one of its timeout if it is still open (the same tick)
   * and was started within {@link JOIN_MS} (so the same deadline), else a new one. Closing at the
   * end of the tick keeps the timer's clock and the deadline's together under fake timers that
   * do not fake `performance` (time then passes for timers between ticks, not for `performance`).
   */
  #watch(u: Unit): void {
    const timeoutMs = u.timeoutMs;
    let bucket = this.#buckets.get(timeoutMs);
    if (bucket === undefined || !bucket.open || u.startMs - bucket.startMs > JOIN_MS) {
      if (bucket !== undefined) this.#close(bucket);
      const fresh: Bucket = { startMs: u.startMs, timeoutMs, members: [], left: 0, timer: undefined, open: true };
      fresh.timer = setTimeout(() => {
        this.#fire(fresh);
      }, timerDelayMs(timeoutMs));
      unref(fresh.timer);
      this.#buckets.set(timeoutMs, fresh);
      afterCallbacks(() => {
        this.#close(fresh);
      });
      bucket = fresh;
    }
    bucket.members.push(u);
    bucket.left++;
    u.bucket = bucket;
    u.deadlineMs = bucket.startMs + timeoutMs;
  }

  /** No unit joins `bucket` any more; its timer goes if its units have all settled. */
  #close(bucket: Bucket): void {
    if (!bucket.open) return;
    bucket.open = false;
    if (this.#buckets.get(bucket.timeoutMs) === bucket) this.#buckets.delete(bucket.timeoutMs);
    if (bucket.left === 0 && bucket.timer !== undefined) {
      clearTimeout(bucket.timer);
      bucket.timer = undefined;
    }
  }

  /**
   * A timer's deadline: its units still queued fail now, unsent; those in flight once the replies
   * already received are read (after the poll phase), if those did not settle them.
   */
  #fire(bucket: Bucket): void {
    bucket.timer = undefined;
    this.#close(bucket);
    let sent: Unit[] | undefined;
    let touched: Set<Slot> | undefined;
    for (const u of bucket.members) {
      if (u.state === QUEUED) {
        const slot = this.#slotHolding(u);
        this.#fail(u, new RateWardenRedisTimeoutError(u.timeoutMs / 1000), slot);
        (touched ??= new Set()).add(slot);
      } else if (u.state === SENT) (sent ??= []).push(u);
    }
    if (touched !== undefined) for (const slot of touched) compact(slot);
    if (sent === undefined) return;
    const late = sent;
    afterInput(() => {
      for (const u of late) this.#fail(u, new RateWardenRedisTimeoutError(u.timeoutMs / 1000), undefined);
    });
  }

  /** The slot whose queue holds the queued `u`. */
  #slotHolding(u: Unit): Slot {
    return this.#cluster ? this.#slotOf((u.entries[0] as QueuedEntry).redisKey) : this.#slot;
  }
}

function newSlot(): Slot {
  return { queue: [], head: 0, live: 0, inFlight: 0, scheduled: false };
}

/**
 * Drops the units already taken (before `head`) and, when they outnumber the pending ones, the
 * settled units from `slot`'s queue, so that what it holds stays proportional to what is pending
 * (under a steady load the queue is never empty; while Redis hangs most of it has timed out).
 */
function compact(slot: Slot): void {
  const queue = slot.queue;
  if (slot.head >= queue.length) {
    if (queue.length > 0) {
      slot.queue = [];
      slot.head = 0;
    }
    return;
  }
  const held = queue.length - slot.head;
  if (held > 64 && slot.live * 2 < held) {
    const kept: Unit[] = [];
    for (let i = slot.head; i < queue.length; i++) {
      const u = queue[i] as Unit;
      if (u.state === QUEUED) kept.push(u);
    }
    slot.queue = kept;
    slot.head = 0;
  } else if (slot.head > 1024 && slot.head * 2 > queue.length) {
    slot.queue = queue.slice(slot.head);
    slot.head = 0;
  }
}
