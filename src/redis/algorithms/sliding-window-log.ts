/**
 * The sliding-window log on Redis, as the decision protocol sees it ({@link RedisAlgorithm}): its
 * Lua fragment (the in-memory `SlidingWindowLog`'s decisions on a sorted set, on the same grid),
 * its key suffix, its reply's state (ticks until the window is clear), and its block-cache rule.
 *
 * @module
 */
import { outcome } from '../../result.js';
import type { Quota } from '../../quota.js';
import { SlidingWindowLog } from '../../strategies/sliding-window-log.js';
import { TICKS_PER_MS, onGrid, retryAfterSeconds } from '../../time.js';
import type { RedisAlgorithm } from '../algorithm.js';

/** What the block cache keeps of a log's refusal. */
interface LogMemo {
  /** The refused cost: the only cost answered. */
  readonly cost: number;
  /** Remaining as refused (0 when more were live than the threshold). */
  readonly remaining: number;
  /** Ticks from the refusal's time until the window is clear. */
  readonly resetTicks: number;
  /** Ticks from the refusal's time until the refused request fits. */
  readonly waitTicks: number;
}

/**
 * @internal The sliding-window log: one sorted set per key, one member per allowed unit scored by
 * its time in ticks of 2^-10 ms; members are `<time>-<n>`, `n` (six digits, so that they sort by
 * `n`) counting the members already at that time, unique even when requests share a tick. An
 * entry `t` has expired when `now − t >= window`. Entries more than a window ahead of the time
 * given were written under a clock that was ahead (a failover) and do not count (a recording
 * decision drops them). The reply's state is the ticks until the window is clear (before the
 * request, or after it when recorded: one window).
 */
export const SLIDING_WINDOW_LOG_ON_REDIS: RedisAlgorithm = {
  id: 'l',
  suffix: ':log',
  membersPerUnit: 1,
  leftMayBeNegative: true,
  lua: `
local function fmt(x) return string.format('%.0f', x) end
l_check = function(key, threshold, window_ms, cost, given)
  local window = window_ms * 1024
  local now = given
  local hi = '+inf'
  local ahead = false
  local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  local newest = nil
  if last[2] then
    newest = tonumber(last[2])
    if newest - now > window then
      -- Entries more than a window ahead: only those at or before now count.
      ahead = true
      hi = fmt(now)
      last = redis.call('ZREVRANGEBYSCORE', key, hi, '-inf', 'WITHSCORES', 'LIMIT', 0, 1)
      newest = nil
      if last[2] then newest = tonumber(last[2]) end
    end
  end
  local live = 0
  local lo = nil
  local state = 0
  local seq = 0
  if newest then
    -- A clock behind the newest entry counts as at it (as in memory).
    if now < newest then now = newest end
    if newest == now then
      -- The newest member carries the last n used at its time; read here, so that a member
      -- this script did not write fails the check, which writes nothing.
      -- \`<time>-<n>\`, or \`<time>-<n>:<reservation>\`: n is the six digits after the time.
      local p = #fmt(newest) + 2
      seq = nil
      if string.sub(last[1], 1, p - 1) == fmt(newest) .. '-' then seq = tonumber(string.sub(last[1], p, p + 5)) end
      if seq == nil then error({ err = 'ERR ratewarden: the sorted set ' .. key .. ' holds a member it did not write: ' .. string.sub(last[1], 1, 100) }) end
      seq = seq + 1
    end
    lo = '(' .. fmt(now - window)
    live = redis.call('ZCOUNT', key, lo, hi)
    if live > 0 then state = window - (now - newest) end
  end
  local wait = 0
  if cost > threshold then
    wait = -1
  elseif cost > threshold - live then
    -- The request fits once the k + 1 oldest live entries have expired.
    local kth = redis.call('ZRANGEBYSCORE', key, lo, hi, 'WITHSCORES', 'LIMIT', live + cost - threshold - 1, 1)
    wait = window - (now - tonumber(kth[2]))
  end
  -- left: threshold - live, below 0 when more are live than the threshold (a lowered limit).
  return wait, threshold - live, state, now - given, key, now, window, newest, seq, ahead, cost
end
l_commit = function(left, state, shift, key, now, window, newest, seq, ahead, cost)
  if ahead then redis.call('ZREMRANGEBYSCORE', key, '(' .. fmt(now), '+inf') end
  if newest then redis.call('ZREMRANGEBYSCORE', key, '-inf', fmt(now - window)) end
  local done = 0
  -- A reservation's members carry its id, so that its refund finds them and only them.
  local form = '%.0f-%06d'
  if rid then form = '%.0f-%06d:' .. rid end
  while done < cost do
    local batch = {}
    local m = math.min(cost - done, 1000)
    for j = 1, m do
      batch[2 * j - 1] = now
      batch[2 * j] = string.format(form, now, seq + done + j - 1)
    end
    redis.call('ZADD', key, unpack(batch))
    done = done + m
  end
  local px = math.ceil((window + shift) / 1024)
  if px < min_px then px = min_px end
  redis.call('PEXPIRE', key, px)
  return left - cost, window, seq
end
l_tidy = function(left, state, shift, key, now, window, newest, seq, ahead)
  if ahead then redis.call('ZREMRANGEBYSCORE', key, '(' .. fmt(now), '+inf') end
  if newest then
    -- Expired entries go whatever the outcome (as in memory): no later decision counts them.
    redis.call('ZREMRANGEBYSCORE', key, '-inf', fmt(now - window))
    -- The key must live until its entries expire under this limit (a longer window than when
    -- they were written: a tier change).
    if state > 0 then
      local px = math.ceil((state + shift) / 1024)
      if px < min_px then px = min_px end
      redis.call('PEXPIRE', key, px, 'GT')
    end
  end
end
-- The reply's state (ticks until the window is clear) of a key blocked for ticks more.
l_bstate = function(state, ticks) if ticks > state then return ticks end return state end
-- Records points entries at now whatever the count, then keeps only the newest threshold.
l_penalty = function(key, threshold, window_ms, points, given)
  local _, left, state, shift, _, now, window, newest, seq, ahead = l_check(key, threshold, window_ms, 0, given)
  l_commit(left, state, shift, key, now, window, newest, seq, ahead, points)
  -- What is left is live (the commit dropped the expired entries and those ahead).
  local card = redis.call('ZCARD', key)
  if card > threshold then
    redis.call('ZREMRANGEBYRANK', key, 0, card - threshold - 1)
    -- Entries were dropped: a refund of any reservation made before would let them count again
    -- (more permissive than never having made it), so the survivors lose their reservation id
    -- (as in memory, where a truncation makes every earlier ticket refund nothing). Rare: only a
    -- penalty on a full log; at most threshold members.
    local kept = redis.call('ZRANGE', key, 0, -1, 'WITHSCORES')
    for j = 1, #kept, 2 do
      local name = kept[j]
      local colon = string.find(name, ':', 1, true)
      if colon then
        redis.call('ZREM', key, name)
        redis.call('ZADD', key, kept[j + 1], string.sub(name, 1, colon - 1))
      end
    end
  end
end
-- Removes units of the reservation rid's members (recorded at t, numbered n0 to n0 + cost - 1):
-- 1 when that many are there (the highest numbers go), else 0 and nothing is removed.
l_refund = function(key, threshold, window_ms, units, t, n0, cost, given)
  -- Entries that have expired are not refunded (the window moved on: exact), under either clock
  -- (under the limiter's, given is the refund's own reading, as in memory).
  if given - t >= window_ms * 1024 then return 0 end
  local there = {}
  local done = 0
  while done < cost do
    local names = {}
    local m = math.min(cost - done, 1000)
    for j = 1, m do names[j] = string.format('%.0f-%06d:%s', t, n0 + done + j - 1, rid) end
    local scores = redis.call('ZMSCORE', key, unpack(names))
    for j = 1, m do if scores[j] then there[#there + 1] = names[j] end end
    done = done + m
  end
  if #there < units then return 0 end
  local gone = {}
  for j = #there - units + 1, #there do gone[#gone + 1] = there[j] end
  done = 0
  while done < #gone do
    local m = math.min(#gone - done, 1000)
    redis.call('ZREM', key, unpack(gone, done + 1, done + m))
    done = done + m
  end
  return 1
end
`,
  resetMs(state: number): number {
    return state / TICKS_PER_MS;
  },
  createLocal: () => new SlidingWindowLog(),
  block: {
    remember(_atMs, cost, _quota, waitTicks, left, state): LogMemo | undefined {
      // Only when the refused request waits for the oldest live entry (live + cost = threshold +
      // 1, `left` being threshold − live), so that no entry expires during the block (a decision
      // in Redis would drop it, and a later longer window would then not count it).
      if (cost !== left + 1) return undefined;
      return { cost, remaining: left < 0 ? 0 : left, resetTicks: state, waitTicks };
    },
    answer(memo, atMs, reading, cost, quota: Quota, limiterTime) {
      const m = memo as LogMemo;
      if (cost !== m.cost) return undefined;
      const grid = onGrid(reading);
      const elapsedTicks = (grid - atMs) * TICKS_PER_MS;
      const waitMs = (m.waitTicks - elapsedTicks) / TICKS_PER_MS;
      const retryAfter = limiterTime
        ? retryAfterSeconds(reading, grid, waitMs, quota.windowSeconds)
        : retryAfterSeconds(0, 0, waitMs, quota.windowSeconds);
      return outcome(false, m.remaining, retryAfter, quota.threshold, (m.resetTicks - elapsedTicks) / TICKS_PER_MS);
    },
  },
};
