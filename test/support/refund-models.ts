// Reference models of the sliding-window log and GCRA with refunds, penalties and blocks, for the
// Redis strategies' store-level operations (issue 22). Written from the spec (/work/issue22-spec.md,
// sections 1-3), not from the script: plain arrays and one TAT, integer milliseconds (so every
// quantity is exact), one key. A block is the spec's: a refused decision of cost <= threshold
// starts it (when the quota blocks), a blocked key refuses without recording, retryAfter = the
// block's remaining time + the wait a peek at the block's end would report.

/** What a model reports of a decision (times in ms). */
export interface ModelResult {
  readonly allowed: boolean;
  readonly remaining: number;
  /** ms; Infinity for a cost above the threshold. */
  readonly retryMs: number;
  /** ms. */
  readonly resetMs: number;
}

/** The quota of a model: threshold per windowMs, blocks of blockMs (0: none). */
export interface ModelQuota {
  readonly threshold: number;
  readonly windowMs: number;
  readonly blockMs: number;
  readonly extendBlock: boolean;
}

/** A key under one algorithm, with its block. */
export interface RefundModel {
  decide(now: number, cost: number, record: boolean, reservation?: number): ModelResult;
  refund(reservation: number, units: number): boolean;
  penalty(now: number, points: number): ModelResult;
  block(now: number, ms: number): void;
  delete(): boolean;
}

/** The algorithm alone: check at a time, record, and what a blocked key's state reports. */
interface Algorithm {
  check(now: number, cost: number): ModelResult;
  record(now: number, cost: number, reservation: number | undefined): void;
  /** What a recording decision does to a refused key (drop the expired entries). */
  tidy(now: number): void;
  refund(reservation: number, units: number): boolean;
  penalty(now: number, points: number): void;
  readonly empty: boolean;
  clear(): void;
}

function withBlocks(q: ModelQuota, algo: Algorithm): RefundModel {
  let blockEnd: number | undefined;
  let blockKey = false; // the block key exists in Redis (kept an hour under time: "limiter")
  const blocked = (now: number, cost: number): ModelResult => {
    const end = blockEnd as number;
    const state = algo.check(now, cost);
    const resetMs = Math.max(state.resetMs, end - now);
    if (cost > q.threshold) return { allowed: false, remaining: 0, retryMs: Infinity, resetMs };
    const atEnd = algo.check(end, cost);
    return { allowed: false, remaining: 0, retryMs: end - now + atEnd.retryMs, resetMs };
  };
  const start = (end: number): void => {
    blockEnd = end;
    blockKey = true;
  };
  return {
    decide(now, cost, record, reservation) {
      if (blockEnd !== undefined && blockEnd > now) {
        if (record && q.extendBlock && cost <= q.threshold && now + q.blockMs > blockEnd) start(now + q.blockMs);
        return blocked(now, cost);
      }
      const r = algo.check(now, cost);
      if (!record) return r;
      if (r.allowed) {
        algo.record(now, cost, reservation);
        return algo.check(now, 0);
      }
      algo.tidy(now);
      if (q.blockMs > 0 && cost <= q.threshold) {
        start(now + q.blockMs);
        return blocked(now, cost);
      }
      return r;
    },
    refund: (reservation, units) => algo.refund(reservation, units),
    penalty(now, points) {
      algo.penalty(now, points);
      if (blockEnd !== undefined && blockEnd > now) return blocked(now, 1);
      return algo.check(now, 1);
    },
    block(now, ms) {
      start(now + ms);
    },
    delete() {
      const there = !algo.empty || blockKey;
      algo.clear();
      blockEnd = undefined;
      blockKey = false;
      return there;
    },
  };
}

/** The sliding-window log: entries (time, reservation), oldest first. */
export function logModel(q: ModelQuota): RefundModel {
  let entries: { t: number; r: number | undefined }[] = [];
  const live = (now: number) => entries.filter((e) => now - e.t < q.windowMs);
  const algo: Algorithm = {
    check(now, cost) {
      const l = live(now);
      const newest = entries.length === 0 ? undefined : entries[entries.length - 1]!.t;
      const resetMs = l.length === 0 || newest === undefined ? 0 : q.windowMs - (now - newest);
      const remaining = Math.max(0, q.threshold - l.length);
      if (cost > q.threshold) return { allowed: false, remaining, retryMs: Infinity, resetMs };
      // As a peek reports it: remaining and resetAfter before the request.
      if (cost <= q.threshold - l.length) return { allowed: true, remaining: q.threshold - l.length, retryMs: 0, resetMs };
      const kth = l[l.length + cost - q.threshold - 1]!.t;
      return { allowed: false, remaining, retryMs: q.windowMs - (now - kth), resetMs };
    },
    record(now, cost, r) {
      entries = live(now);
      for (let i = 0; i < cost; i++) entries.push({ t: now, r });
    },
    tidy(now) {
      entries = live(now);
    },
    refund(r, units) {
      const mine = entries.filter((e) => e.r === r);
      if (mine.length < units) return false;
      const gone = new Set(mine.slice(mine.length - units));
      entries = entries.filter((e) => !gone.has(e));
      return true;
    },
    penalty(now, points) {
      entries = live(now);
      for (let i = 0; i < points; i++) entries.push({ t: now, r: undefined });
      if (entries.length > q.threshold) {
        // Entries dropped: no reservation made before refunds any more (they would count again).
        entries = entries.slice(entries.length - q.threshold).map((e) => ({ t: e.t, r: undefined }));
      }
    },
    get empty() {
      return entries.length === 0;
    },
    clear() {
      entries = [];
    },
  };
  return withBlocks(q, algo);
}

/**
 * GCRA: the theoretical arrival time scaled by the threshold (integers), and who wrote it last
 * (a reservation, or `null` for anything else): a refund is exact only while its reservation's
 * write is the last.
 */
export function gcraModel(q: ModelQuota): RefundModel {
  const T = q.windowMs; // the emission interval, scaled by the threshold
  const span = q.threshold * q.windowMs;
  let tat: number | undefined;
  let writer: number | null = null;
  const algo: Algorithm = {
    check(now, cost) {
      const n = now * q.threshold;
      const debt = tat === undefined ? 0 : Math.max(0, tat - n);
      const remaining = Math.max(0, Math.floor((span - debt) / T));
      const needed = debt + cost * T;
      if (cost > q.threshold) return { allowed: false, remaining, retryMs: Infinity, resetMs: debt / q.threshold };
      // As a peek reports it: remaining and resetAfter before the request.
      if (needed <= span) return { allowed: true, remaining, retryMs: 0, resetMs: debt / q.threshold };
      return { allowed: false, remaining, retryMs: (needed - span) / q.threshold, resetMs: debt / q.threshold };
    },
    record(now, cost, r) {
      tat = Math.max(tat ?? -Infinity, now * q.threshold) + cost * T;
      writer = r ?? null;
    },
    tidy() {},
    refund(r, units) {
      if (tat === undefined || writer !== r) return false;
      tat -= units * T;
      return true;
    },
    penalty(now, points) {
      // Up to two windows ahead of now (the in-memory GCRA's bound).
      tat = Math.min(Math.max(tat ?? -Infinity, now * q.threshold) + points * T, now * q.threshold + 2 * span);
      writer = null;
    },
    get empty() {
      return tat === undefined;
    },
    clear() {
      tat = undefined;
      writer = null;
    },
  };
  return withBlocks(q, algo);
}
