/**
 * GCRA on Redis, as the decision protocol sees it ({@link RedisAlgorithm}): its Lua fragment
 * (the in-memory `GCRA`'s arithmetic on the same grid and the same integer state), its key
 * suffix, its reply's state (the debt), and its block-cache rule, which answers with the
 * in-memory `GCRA` itself.
 *
 * @module
 */
import type { Quota } from '../../quota.js';
import { GCRA, GCRAState } from '../../strategies/gcra.js';
import { TICKS_PER_MS } from '../../time.js';
import type { RedisAlgorithm } from '../algorithm.js';

/** The in-memory GCRA, whose `peek` the block cache asks. */
const inMemory = new GCRA();

/**
 * @internal GCRA: one string per key, 32 bytes, four little-endian doubles (`struct.pack('<dddd')`),
 * each an integer: the time of the last recorded decision in ticks of 2^-10 ms; the theoretical
 * arrival time's lead over it (the **debt**) in units of `1 / threshold` tick, so that a request
 * adds `cost × window` units and a tick repays `threshold`; and the threshold and window (ms) it
 * was computed under, so that a tier change converts it as in memory (the debt keeps its share
 * of the window, rounded up). A state more than a window ahead of the time given was written
 * under a clock that was ahead (a failover) and is forgotten. The reply's state is the debt
 * (before the request, or after it when recorded). Packed rather than printed: formatting and
 * parsing four numbers as text took about a microsecond of Redis time per decision.
 */
export const GCRA_ON_REDIS: RedisAlgorithm = {
  id: 'g',
  suffix: ':gcra',
  membersPerUnit: 0,
  leftMayBeNegative: false,
  lua: `
-- Ticks until a debt of need units is repaid at rate units per tick, exactly.
local function repay(need, rate)
  local m = math.ceil(need / rate)
  if m * rate < need then m = m + 1 elseif (m - 1) * rate >= need then m = m - 1 end
  return m
end
local function whole(x, lo, hi) return x == x and x >= lo and x <= hi and x % 1 == 0 end
-- The state: time, debt, threshold, window; a reservation's id after them (40 bytes) when the
-- last write was a reservation's. Fails, before any write, on anything else.
local function g_read(key)
  local raw = redis.call('GET', key)
  if not raw then return nil end
  local at, d, ot, ow, id = 0, 0, 0, 0, 0
  if #raw == 32 then at, d, ot, ow = struct.unpack('<dddd', raw)
  elseif #raw == 40 then at, d, ot, ow, id = struct.unpack('<ddddd', raw) end
  -- Only state this script writes: whole numbers in range (a time in ticks within the limiter's
  -- ±2^47 ms; a debt below 2^53, penalties included).
  if not (whole(ot, 1, 2 ^ 53) and whole(ow, 1, 2 ^ 53) and whole(at, -(2 ^ 58), 2 ^ 58) and whole(d, 0, 2 ^ 53) and whole(id, 0, 2 ^ 53)) then
    error({ err = 'ERR ratewarden: ' .. key .. ' does not hold GCRA state written by ratewarden' })
  end
  return at, d, ot, ow, id
end
g_check = function(key, threshold, window_ms, cost, given)
  local window = window_ms * 1024
  local span = threshold * window
  local now = given
  local debt = 0
  local changed = false
  local at, d, ot, ow = g_read(key)
  if at then
    if at - now <= ow * 1024 then
      -- A clock behind the last decision counts as at it (as in memory).
      if now < at then now = at end
      -- Repaid at ot units per tick (a product beyond 2^53 exceeds any debt: 0).
      local repaid = (now - at) * ot
      if repaid < d then debt = d - repaid end
      if ot ~= threshold or ow ~= window_ms then
        -- The key's limit changed (a tier): the debt keeps its share of the window.
        local share = debt / (ot * 1024 * ow)
        debt = math.ceil(share * span)
        if share <= 1 and debt > span then debt = span end
        changed = true
      end
    end
  end
  local needed = debt + cost * window
  local wait = 0
  if cost > threshold then wait = -1 elseif needed > span then wait = repay(needed - span, threshold) end
  -- After a penalty the debt may exceed the window: nothing remains.
  local left = math.floor((span - debt) / window)
  if left < 0 then left = 0 end
  return wait, left, debt, now - given, key, now, threshold, window_ms, needed, changed
end
local function g_set(shift, key, now, threshold, window_ms, debt, id)
  local px = math.ceil((debt / threshold + shift) / 1024)
  if px < min_px then px = min_px end
  local packed
  if id then packed = struct.pack('<ddddd', now, debt, threshold, window_ms, id)
  else packed = struct.pack('<dddd', now, debt, threshold, window_ms) end
  redis.call('SET', key, packed, 'PX', px)
end
g_commit = function(left, state, shift, key, now, threshold, window_ms, needed)
  -- A reservation's id is kept with the state: its refund applies only while no other write
  -- has been made since.
  local id = nil
  if rid then id = tonumber(rid) end
  g_set(shift, key, now, threshold, window_ms, needed, id)
  local window = window_ms * 1024
  return math.floor((threshold * window - needed) / window), needed, 0
end
g_tidy = function(left, state, shift, key, now, threshold, window_ms, needed, changed)
  -- A decision (not a peek) under a changed limit: the new limit applies from now on,
  -- whatever the outcome (as in memory), so that a refusal's wait holds.
  if changed then g_set(shift, key, now, threshold, window_ms, state) end
end
-- The reply's state (the debt, in 1 / threshold tick) of a key blocked for ticks more.
g_bstate = function(state, ticks, threshold)
  if ticks * threshold > state then return ticks * threshold end
  return state
end
-- TAT = max(TAT, now) + points × T, whatever the debt, up to two windows ahead of now (as in
-- memory: repeated penalties saturate there, and a whole window's wait after the penalty).
g_penalty = function(key, threshold, window_ms, points, given)
  local _, _, debt, shift, _, now = g_check(key, threshold, window_ms, 0, given)
  local d = debt + points * window_ms * 1024
  local cap = 2 * threshold * window_ms * 1024
  if d > cap then d = cap end
  g_set(shift, key, now, threshold, window_ms, d)
end
-- Gives back units of the reservation rid (TAT -= units × T) when its write is still the last
-- one under the same limit: 1; else 0, nothing written.
g_refund = function(key, threshold, window_ms, units, t)
  local at, d, ot, ow, id = g_read(key)
  if not at or id ~= tonumber(rid) or at ~= t or ot ~= threshold or ow ~= window_ms then return 0 end
  local back = units * window_ms * 1024
  if back > d then return 0 end
  redis.call('SET', key, struct.pack('<ddddd', at, d - back, ot, ow, id), 'KEEPTTL')
  return 1
end
`,
  resetMs(state: number, quota: Quota): number {
    return state / quota.threshold / TICKS_PER_MS;
  },
  createLocal: () => new GCRA(),
  block: {
    // The whole state is the debt at the refusal's time: any request it refuses is refused.
    remember: (atMs, _cost, quota, _waitTicks, _left, state) => new GCRAState(atMs, state, quota),
    answer(memo, _atMs, reading, cost, quota) {
      const result = inMemory.peek(memo as GCRAState, reading, cost, quota);
      return result.allowed ? undefined : result;
    },
  },
};
