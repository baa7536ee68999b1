// A refused group records nothing anywhere; an allowed one records its cost on every member.
// Property over random groups: members drawn from a few limiters (the first group always has
// one limiter twice, on the user's key and another), every in-memory strategy and stores,
// maxKeys from 1 (full at once) up, tiers, costs, clock steps, allowRequestSync and
// allowRequest. Checked two ways at every group call:
// - against a model: fresh limiters replaying what was recorded so far, then the members'
//   requests one by one (allowed only if each is); the group must decide as the model, and
//   afterwards every limiter must answer every peek as the model's do;
// - by comparing each limiter's observable state before and after: a refused group leaves
//   peeks, size and stats as they were (but for the count of rejections of the limits that
//   refused, as documented).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  FixedWindow,
  GCRA,
  RateLimitGroup,
  RateLimiter,
  SlidingWindowCounter,
  SlidingWindowLog,
  TokenBucket,
  type GroupMember,
  type RateLimitResult,
  type RateLimiterStats,
  type User,
} from '../../src/index.js';
import { AwaitingCounter, AwaitingStore } from '../support/stores.js';

const KINDS = ['log', 'counter', 'fixed', 'bucket', 'gcra', 'store-log', 'store-gcra', 'store-counter'] as const;
type Kind = (typeof KINDS)[number];

interface LimiterConfig {
  readonly kind: Kind;
  readonly threshold: number;
  readonly windowSeconds: number;
  /** Ignored by stores (the limiter keeps no key for them). */
  readonly maxKeys: number;
  /** A tier for the keys starting with `org:`, when set. */
  readonly orgTier: { readonly threshold: number; readonly windowSeconds: number } | undefined;
}

const KEY_FNS = {
  own: undefined,
  org: (u: User | string) => `org:${typeof u === 'string' ? u : u.id}`,
  everyone: () => 'everyone',
} as const;
type KeyFn = keyof typeof KEY_FNS;

/** Every key a limiter may be asked about: the users', the members' and fillers. */
const KEYS = ['a', 'b', 'c', 'org:a', 'org:b', 'org:c', 'everyone', 'x', 'y'];
const USERS = ['a', 'b', 'c'];

type Op =
  | { readonly op: 'advance'; readonly ms: number }
  | { readonly op: 'direct'; readonly limiter: number; readonly key: string; readonly cost: number }
  | { readonly op: 'group'; readonly group: number; readonly user: string; readonly cost: number; readonly sync: boolean };

function strategyOf(kind: Kind) {
  switch (kind) {
    case 'log':
      return new SlidingWindowLog();
    case 'counter':
      return new SlidingWindowCounter();
    case 'fixed':
      return new FixedWindow();
    case 'bucket':
      return new TokenBucket();
    case 'gcra':
      return new GCRA();
    case 'store-log':
      return new AwaitingStore(new SlidingWindowLog());
    case 'store-gcra':
      return new AwaitingStore(new GCRA(), { atomic: true });
    case 'store-counter':
      return new AwaitingCounter();
  }
}

const isStore = (kind: Kind) => kind.startsWith('store-');

/** A pool of limiters built from `configs`, on one clock. */
function poolOf(configs: readonly LimiterConfig[]) {
  const clock = { now: 0 };
  const limiters = configs.map((c) => {
    const tier = c.orgTier;
    return new RateLimiter<unknown>({
      threshold: c.threshold,
      windowSeconds: c.windowSeconds,
      strategy: strategyOf(c.kind),
      clock: () => clock.now,
      ...(isStore(c.kind) ? {} : { maxKeys: c.maxKeys }),
      ...(tier === undefined ? {} : { limitFor: (_u: User | string, key: string) => (key.startsWith('org:') ? tier : undefined) }),
    });
  });
  return { clock, limiters };
}

type Pool = ReturnType<typeof poolOf>;

/** One recorded request, as the model replays it. */
interface Recorded {
  readonly at: number;
  readonly limiter: number;
  readonly key: string;
  readonly cost: number;
}

async function decide(limiter: RateLimiter<unknown>, kind: Kind, key: string, cost: number): Promise<RateLimitResult> {
  return isStore(kind) ? limiter.allowRequest(key, { cost }) : limiter.allowRequestSync(key, { cost });
}

/** Fresh limiters that have recorded `log`, at the time of its last entry. */
async function replay(configs: readonly LimiterConfig[], log: readonly Recorded[]): Promise<Pool> {
  const pool = poolOf(configs);
  for (const entry of log) {
    pool.clock.now = entry.at;
    const result = await decide(pool.limiters[entry.limiter] as RateLimiter<unknown>, (configs[entry.limiter] as LimiterConfig).kind, entry.key, entry.cost);
    expect(result.allowed, 'a recorded request replays as allowed').toBe(true);
  }
  return pool;
}

/** What can be seen of one limiter: peeks of every key at cost 1 and 3, size, stats. */
interface Seen {
  readonly peeks: readonly Pick<RateLimitResult, 'allowed' | 'remaining' | 'limit'>[];
  readonly size: number;
  readonly stats: RateLimiterStats;
}

async function look(limiter: RateLimiter<unknown>): Promise<Seen> {
  const peeks: Pick<RateLimitResult, 'allowed' | 'remaining' | 'limit'>[] = [];
  for (const key of KEYS) {
    for (const cost of [1, 3]) {
      const { allowed, remaining, limit } = await limiter.peek(key, { cost });
      peeks.push({ allowed, remaining, limit });
    }
  }
  return { peeks, size: limiter.size, stats: limiter.stats() };
}

const tierArb = fc.option(
  fc.record({ threshold: fc.integer({ min: 1, max: 6 }), windowSeconds: fc.integer({ min: 1, max: 4 }) }),
  { nil: undefined },
);

const configArb: fc.Arbitrary<LimiterConfig> = fc.record({
  kind: fc.constantFrom(...KINDS),
  threshold: fc.integer({ min: 1, max: 6 }),
  windowSeconds: fc.integer({ min: 1, max: 4 }),
  maxKeys: fc.oneof(fc.integer({ min: 1, max: 5 }), fc.constant(Infinity)),
  orgTier: tierArb,
});

/** A group member: a limiter of the pool, by index, and its key function. */
interface MemberSpec {
  readonly limiter: number;
  readonly key: KeyFn;
}

/** A group's members, each (limiter, key function) at most once. */
const membersArb = (limiters: number): fc.Arbitrary<MemberSpec[]> =>
  fc
    .uniqueArray(
      fc.record({ limiter: fc.integer({ min: 0, max: limiters - 1 }), key: fc.constantFrom<KeyFn>('own', 'org', 'everyone') }),
      { minLength: 1, maxLength: 4, selector: (m) => `${m.limiter}/${m.key}` },
    );

const opArb = (limiters: number, groups: number): fc.Arbitrary<Op> =>
  fc.oneof(
    { weight: 2, arbitrary: fc.record({ op: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 2_500 }) }) },
    {
      weight: 3,
      arbitrary: fc.record({
        op: fc.constant('direct' as const),
        limiter: fc.integer({ min: 0, max: limiters - 1 }),
        key: fc.constantFrom(...KEYS),
        cost: fc.integer({ min: 1, max: 3 }),
      }),
    },
    {
      weight: 4,
      arbitrary: fc.record({
        op: fc.constant('group' as const),
        group: fc.integer({ min: 0, max: groups - 1 }),
        user: fc.constantFrom(...USERS),
        cost: fc.integer({ min: 1, max: 3 }),
        sync: fc.boolean(),
      }),
    },
  );

const scenarioArb = fc
  .record({
    configs: fc.array(configArb, { minLength: 1, maxLength: 3 }),
    // The first group always has limiter 0 twice, on two keys (the shape).
    twice: fc.constantFrom<KeyFn>('org', 'everyone'),
  })
  .chain(({ configs, twice }) =>
    fc.record({
      configs: fc.constant(configs),
      groups: fc.tuple(
        membersArb(configs.length).map((m): MemberSpec[] => [
          { limiter: 0, key: 'own' },
          { limiter: 0, key: twice },
          ...m.filter((x) => x.limiter !== 0),
        ]),
        membersArb(configs.length),
      ),
      ops: fc.array(opArb(configs.length, 2), { minLength: 1, maxLength: 30 }),
    }),
  );

describe('a refused group records nothing anywhere', () => {
  it('property: random groups decide as the model, and a refused one changes no limiter', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, async ({ configs, groups: memberLists, ops }) => {
        const pool = poolOf(configs);
        const groups = memberLists.map(
          (members) =>
            new RateLimitGroup(
              members.map((m): GroupMember => {
                const keyFn = KEY_FNS[m.key];
                const limiter = pool.limiters[m.limiter] as RateLimiter<unknown>;
                return keyFn === undefined ? { limiter } : { limiter, key: keyFn };
              }),
            ),
        );
        const inMemory = memberLists.map((members) => members.every((m) => !isStore((configs[m.limiter] as LimiterConfig).kind)));
        const log: Recorded[] = [];
        for (const op of ops) {
          if (op.op === 'advance') {
            pool.clock.now += op.ms;
            continue;
          }
          if (op.op === 'direct') {
            const limiter = pool.limiters[op.limiter] as RateLimiter<unknown>;
            const r = await decide(limiter, (configs[op.limiter] as LimiterConfig).kind, op.key, op.cost);
            if (r.allowed) log.push({ at: pool.clock.now, limiter: op.limiter, key: op.key, cost: op.cost });
            continue;
          }
          const members = memberLists[op.group] as readonly MemberSpec[];
          const group = groups[op.group] as RateLimitGroup;
          const requests = members.map((m) => ({
            at: pool.clock.now,
            limiter: m.limiter,
            key: m.key === 'own' ? op.user : m.key === 'org' ? `org:${op.user}` : 'everyone',
            cost: op.cost,
          }));
          // The model: what was recorded so far, then each member's request, one by one.
          const trial = await replay(configs, log);
          trial.clock.now = pool.clock.now;
          let fits = true;
          const modelResults: RateLimitResult[] = [];
          for (const q of requests) {
            const r = await decide(trial.limiters[q.limiter] as RateLimiter<unknown>, (configs[q.limiter] as LimiterConfig).kind, q.key, q.cost);
            modelResults.push(r);
            if (!r.allowed) {
              fits = false;
              break;
            }
          }

          const before = await Promise.all(pool.limiters.map(look));
          const sync = op.sync && inMemory[op.group] === true;
          const result = sync ? group.allowRequestSync(op.user, { cost: op.cost }) : await group.allowRequest(op.user, { cost: op.cost });
          expect(result.allowed, `group ${op.group} for ${op.user} at ${pool.clock.now} ms`).toBe(fits);
          const after = await Promise.all(pool.limiters.map(look));

          if (result.allowed) {
            log.push(...requests);
            expect(result.results.map((r) => r.remaining)).toEqual(modelResults.map((r) => r.remaining));
            for (let l = 0; l < pool.limiters.length; l++) {
              const mine = members.filter((m) => m.limiter === l).length;
              const b = before[l] as Seen;
              const a = after[l] as Seen;
              expect(a.stats.allowed).toBe(b.stats.allowed + mine);
              expect(a.stats.rejected).toBe(b.stats.rejected);
            }
          } else {
            for (let l = 0; l < pool.limiters.length; l++) {
              const refusing = members.filter((m, i) => m.limiter === l && result.results[i]?.allowed === false).length;
              const b = before[l] as Seen;
              expect(after[l], `limiter ${l} unchanged by the refused group`).toEqual({
                ...b,
                stats: { ...b.stats, rejected: b.stats.rejected + refusing },
              });
            }
          }
          // Every limiter answers every peek as the model's (which recorded what the group did).
          const model = await replay(configs, log);
          model.clock.now = pool.clock.now;
          const expected = await Promise.all(model.limiters.map(look));
          for (let l = 0; l < pool.limiters.length; l++) {
            expect((after[l] as Seen).peeks, `limiter ${l}'s peeks`).toEqual((expected[l] as Seen).peeks);
            expect((after[l] as Seen).size, `limiter ${l}'s size`).toBe((expected[l] as Seen).size);
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it('property: concurrent groups and direct decisions record exactly what was allowed', async () => {
    // Nothing expires (one clock reading, one-hour windows), so what a key holds is the sum of
    // the costs allowed on it; no maxKeys here (the sequential property covers it).
    const kinds = ['log', 'bucket', 'store-log', 'store-gcra', 'store-counter'] as const;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ kind: fc.constantFrom(...kinds), threshold: fc.integer({ min: 1, max: 6 }) }), { minLength: 1, maxLength: 3 }),
        fc.array(membersArb(3), { minLength: 1, maxLength: 3 }),
        fc.array(
          fc.record({
            group: fc.option(fc.nat(), { nil: undefined }), // undefined: a direct decision
            limiter: fc.nat(),
            key: fc.constantFrom(...KEYS),
            user: fc.constantFrom(...USERS),
            cost: fc.integer({ min: 1, max: 3 }),
            sync: fc.boolean(),
          }),
          { minLength: 1, maxLength: 25 },
        ),
        async (specs, memberLists, calls) => {
          const configs = specs.map((c): LimiterConfig => ({ ...c, windowSeconds: 3_600, maxKeys: Infinity, orgTier: undefined }));
          const { limiters } = poolOf(configs);
          const lists = memberLists.map((members) => {
            const seen = new Set<string>();
            return members
              .map((m) => ({ ...m, limiter: m.limiter % limiters.length }))
              .filter((m) => !seen.has(`${m.limiter}/${m.key}`) && seen.add(`${m.limiter}/${m.key}`));
          });
          const groups = lists.map(
            (members) =>
              new RateLimitGroup(
                members.map((m): GroupMember => {
                  const keyFn = KEY_FNS[m.key];
                  const limiter = limiters[m.limiter] as RateLimiter<unknown>;
                  return keyFn === undefined ? { limiter } : { limiter, key: keyFn };
                }),
              ),
          );
          const allowed = new Map<string, number>();
          const count = (limiter: number, key: string, cost: number) => {
            const slot = `${limiter}/${key}`;
            allowed.set(slot, (allowed.get(slot) ?? 0) + cost);
          };
          // Every call is made before any settles; synchronous ones are decided as they are made.
          const pending = calls.map(async (call) => {
            if (call.group === undefined) {
              const l = call.limiter % limiters.length;
              const kind = (configs[l] as LimiterConfig).kind;
              const limiter = limiters[l] as RateLimiter<unknown>;
              const r = call.sync && !isStore(kind) ? limiter.allowRequestSync(call.key, { cost: call.cost }) : await limiter.allowRequest(call.key, { cost: call.cost });
              if (r.allowed) count(l, call.key, call.cost);
              return;
            }
            const g = call.group % groups.length;
            const members = lists[g] as readonly MemberSpec[];
            const group = groups[g] as RateLimitGroup;
            const sync = call.sync && members.every((m) => !isStore((configs[m.limiter] as LimiterConfig).kind));
            const r = sync ? group.allowRequestSync(call.user, { cost: call.cost }) : await group.allowRequest(call.user, { cost: call.cost });
            if (r.allowed) {
              for (const m of members) count(m.limiter, m.key === 'own' ? call.user : m.key === 'org' ? `org:${call.user}` : 'everyone', call.cost);
            }
          });
          await Promise.all(pending);
          for (let l = 0; l < limiters.length; l++) {
            const limiter = limiters[l] as RateLimiter<unknown>;
            for (const key of KEYS) {
              const held = limiter.threshold - (await limiter.peek(key)).remaining;
              expect(held, `limiter ${l} (${(configs[l] as LimiterConfig).kind}), key ${key}`).toBe(allowed.get(`${l}/${key}`) ?? 0);
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('property: outside traffic while groups await their stores: a refused group recorded nowhere, an allowed one everywhere once, no limit exceeded', async () => {
    // Nothing expires (one clock reading, one-hour windows and tiers), so what a key holds is the
    // sum of the costs allowed on it since an in-memory limiter last forgot it (reset); nothing is
    // ever clear, so no key is evicted. Every store runs the next outside calls at the start of
    // each of its records, while the caller (a group, mostly) awaits it: random async and sync
    // decisions, peeks and waits on random keys of every limiter (the groups' keys among them),
    // another group's call, cleanUp and reset. Counted by `decision` listeners (what the limiters
    // report), checked against what each limiter then holds: a group refused after one of its
    // limits recorded would leave a unit that no allowed decision accounts for.
    const memoryKinds = KINDS.filter((k) => !isStore(k));
    const storeKinds = KINDS.filter(isStore);
    const hourConfig = (kind: fc.Arbitrary<Kind>): fc.Arbitrary<LimiterConfig> =>
      fc.record({
        kind,
        threshold: fc.integer({ min: 1, max: 6 }),
        windowSeconds: fc.constant(3_600),
        maxKeys: fc.oneof(fc.integer({ min: 1, max: 4 }), fc.constant(Infinity)),
        orgTier: fc.option(fc.record({ threshold: fc.integer({ min: 1, max: 6 }), windowSeconds: fc.constant(3_600) }), { nil: undefined }),
      });
    const outsideArb = fc.record({
      call: fc.constantFrom('allow', 'allowSync', 'peek', 'peekSync', 'wait', 'group', 'cleanUp', 'reset'),
      limiter: fc.nat(),
      key: fc.constantFrom(...KEYS),
      user: fc.constantFrom(...USERS),
      cost: fc.integer({ min: 1, max: 3 }),
    });
    type Outside = typeof outsideArb extends fc.Arbitrary<infer T> ? T : never;
    await fc.assert(
      fc.asyncProperty(
        // Limiter 0 is in memory, the last one a store; the first group has both.
        hourConfig(fc.constantFrom(...memoryKinds)),
        fc.array(hourConfig(fc.constantFrom(...KINDS)), { maxLength: 2 }),
        hourConfig(fc.constantFrom(...storeKinds)),
        fc.array(membersArb(4), { minLength: 1, maxLength: 3 }),
        fc.array(
          fc.record({ group: fc.nat(), user: fc.constantFrom(...USERS), cost: fc.integer({ min: 1, max: 3 }), sync: fc.boolean() }),
          { minLength: 1, maxLength: 8 },
        ),
        fc.array(outsideArb, { maxLength: 40 }),
        fc.integer({ min: 1, max: 3 }),
        async (first, middle, last, memberLists, calls, outside, perRecord) => {
          const configs = [first, ...middle, last];
          const { limiters } = poolOf(configs);
          const lists = memberLists.map((members, g) => {
            const seen = new Set<string>();
            const forced: MemberSpec[] = g === 0 ? [{ limiter: 0, key: 'own' }, { limiter: configs.length - 1, key: 'own' }] : [];
            return [...forced, ...members.map((m) => ({ ...m, limiter: m.limiter % limiters.length }))].filter(
              (m) => !seen.has(`${m.limiter}/${m.key}`) && seen.add(`${m.limiter}/${m.key}`),
            );
          });
          const groups = lists.map(
            (members) =>
              new RateLimitGroup(
                members.map((m): GroupMember => {
                  const keyFn = KEY_FNS[m.key];
                  const limiter = limiters[m.limiter] as RateLimiter<unknown>;
                  return keyFn === undefined ? { limiter } : { limiter, key: keyFn };
                }),
              ),
          );
          const allInMemory = lists.map((members) => members.every((m) => !isStore((configs[m.limiter] as LimiterConfig).kind)));
          // What each limiter reported allowed, by key, since the key was last forgotten.
          const held = new Map<string, number>();
          limiters.forEach((limiter, l) => {
            limiter.on('decision', (key, result, cost) => {
              if (result.allowed) held.set(`${l}/${key}`, (held.get(`${l}/${key}`) ?? 0) + cost);
            });
          });
          const settling: Promise<unknown>[] = [];
          const queue = [...outside];
          const runOutside = (op: Outside): void => {
            const l = op.limiter % limiters.length;
            const limiter = limiters[l] as RateLimiter<unknown>;
            const inMemory = !isStore((configs[l] as LimiterConfig).kind);
            const options = { cost: op.cost };
            const ignore = () => undefined;
            switch (op.call) {
              case 'allow':
                settling.push(limiter.allowRequest(op.key, options));
                break;
              case 'allowSync':
                if (inMemory) limiter.allowRequestSync(op.key, options);
                else settling.push(limiter.allowRequest(op.key, options));
                break;
              case 'peek':
                settling.push(limiter.peek(op.key, options));
                break;
              case 'peekSync':
                if (inMemory) limiter.peekSync(op.key, options);
                else settling.push(limiter.peek(op.key, options));
                break;
              case 'wait':
                settling.push(limiter.waitForSlot(op.key, { ...options, maxWaitSeconds: 0 }).catch(ignore));
                break;
              case 'group': {
                const g = op.limiter % groups.length;
                const group = groups[g] as RateLimitGroup;
                if (allInMemory[g] === true && op.cost % 2 === 1) group.allowRequestSync(op.user, options);
                else settling.push(group.allowRequest(op.user, options));
                break;
              }
              case 'cleanUp':
                limiter.cleanUp();
                break;
              case 'reset':
                if (limiter.reset(op.key) || inMemory) held.delete(`${l}/${op.key}`);
                break;
            }
          };
          for (const limiter of limiters) {
            const store = limiter.strategy as { beforeConsume?: (key: string) => void };
            if ('consume' in store && !('createState' in store)) {
              store.beforeConsume = () => {
                for (let i = 0; i < perRecord && queue.length > 0; i++) runOutside(queue.shift() as Outside);
              };
            }
          }
          await Promise.all(
            calls.map(async (call) => {
              const g = call.group % groups.length;
              const group = groups[g] as RateLimitGroup;
              const options = { cost: call.cost };
              if (call.sync && allInMemory[g] === true) group.allowRequestSync(call.user, options);
              else await group.allowRequest(call.user, options);
            }),
          );
          // What is left runs now; then everything settles.
          while (queue.length > 0) runOutside(queue.shift() as Outside);
          for (const pending of settling) await pending;

          for (let l = 0; l < limiters.length; l++) {
            const config = configs[l] as LimiterConfig;
            const limiter = limiters[l] as RateLimiter<unknown>;
            let tracked = 0;
            for (const key of KEYS) {
              const threshold = key.startsWith('org:') && config.orgTier !== undefined ? config.orgTier.threshold : config.threshold;
              const units = held.get(`${l}/${key}`) ?? 0;
              const where = `limiter ${l} (${config.kind}, maxKeys ${config.maxKeys}), key ${key}`;
              expect(units, `${where}: never more than the threshold allowed`).toBeLessThanOrEqual(threshold);
              if (units > 0) tracked++;
              // A key held by no one may be refused a place under maxKeys: it then holds nothing.
              if (units === 0 && !isStore(config.kind)) continue;
              expect(threshold - (await limiter.peek(key)).remaining, `${where}: holds what was allowed`).toBe(units);
            }
            if (!isStore(config.kind)) {
              expect(limiter.size, `limiter ${l}: the keys holding units`).toBe(tracked);
              expect(limiter.size).toBeLessThanOrEqual(config.maxKeys);
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
