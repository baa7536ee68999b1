/**
 * The Lua script behind every Redis decision: one `EVALSHA` per decision, or per
 * {@link RateLimitGroup} decision over several limits.
 *
 * @module
 */
import { createHash } from 'node:crypto';

/**
 * Decides one or more limits, all or nothing, atomically on the server.
 *
 * KEYS: one key per limit.
 * KEYS, with `r`: one key per limit, then the call's token (in the first key's hash slot).
 * ARGV[1]: `1` to record when every limit allows, `0` to only check (peek), `r` to record at most
 *   once per call (for clients that re-send a call after a reconnect: the token, if set, holds
 *   the reply of the call's first run, returned unchanged with the server's time now; else the
 *   script decides as with `1` and stores its reply there, with an expiry of the time left to
 *   the deadline plus 1 s, or 60 s without a deadline), or `t` for the handshake: return
 *   `{ server time }` alone, touching no key (the other arguments absent).
 * ARGV[2]: the time in **ticks** of 2^-10 ms (an integer: the limiter's reading on the grid of
 *   `src/time.ts`), or an empty string to read the server's clock (`TIME`, counted from
 *   2027-01-15T08:00:00Z, converted to ticks).
 * ARGV[3]: the shortest expiry to set, in milliseconds (at least 1).
 * ARGV[4]: the caller's deadline, in the server's microseconds (derived from the server time
 *   of an earlier reply: the handshake's, before the first decision), or empty when the caller
 *   has no timeout: a script that starts later (queued behind a pause, or replayed after a
 *   reconnect) writes nothing and returns `{ -1, server time }`.
 * ARGV[5 + 4i ..]: per limit i: the kind (`l`: sliding-window log, `g`: GCRA), threshold,
 *   window in whole milliseconds, cost.
 *
 * The arithmetic is the in-memory strategies' (`strategies/sliding-window-log.ts`,
 * `strategies/gcra.ts`), on the same grid, and exact: times are integers in ticks and only
 * their differences are used (Lua numbers are doubles; Redis formats the numbers passed to
 * `redis.call` exactly).
 *
 * Returns a flat array, per limit: allowed (0/1), remaining (integer), the wait in ticks (an
 * integer: 0 when allowed, `-1` for never), resetAfter in milliseconds (a double, as
 * `{ double = x }`: Redis formats it exactly, where a plain Lua number would be truncated to an
 * integer), and the shift in ticks (an integer: how far the time decided at is after the time
 * given, when that was behind the key's state; the wait counts from there). Values are after
 * recording when `record` and every limit allows, else as they stand before the request (as
 * `peek` says). Last, the server's time in microseconds (from which the caller learns the offset
 * of its clock to the server's, for deadlines).
 *
 * Sliding-window log: a sorted set of one member per allowed unit, scored by its time in ticks;
 * members are `<time>-<n>`, `n` (six digits) counting the members already at that time, so two
 * requests in the same tick stay distinct. An entry `t` is expired when `now − t >= window`.
 * GCRA: a string of 32 bytes, four little-endian IEEE doubles (`struct.pack('<dddd', …)`), each an
 * integer: the time of the last recorded decision in ticks, the theoretical arrival time's lead
 * over it in units of `1 / threshold` tick, and the threshold and window (ms) it was computed
 * under. (Packed rather than printed: formatting and parsing four numbers as text took about a
 * microsecond of Redis time per decision.)
 *
 * Every write sets the key's expiry to when its state is clear (`PEXPIRE` / `SET PX`), so idle
 * keys vanish without a sweep; a log decision that records nothing extends the expiry if the
 * limit's window grew (`PEXPIRE … GT`, Redis 7.0 or later). A rejected decision records nothing;
 * like the in-memory strategies, every decision drops the log's expired entries (peek does not),
 * and a decision (not a peek) on a GCRA key whose limit changed converts it, whatever the
 * outcome.
 */
export const DECIDE_SCRIPT = `
local t = redis.call('TIME')
-- Microseconds from 2027-01-15T08:00:00Z (negative before it).
local server_us = (tonumber(t[1]) - 1800000000) * 1000000 + tonumber(t[2])
if ARGV[1] == 't' then
  -- The handshake: the caller learns the server's clock before its first decision.
  return { server_us }
end
-- 'r': record, at most once. The client may re-send a call after a reconnect (ioredis does), so
-- the last key is the call's token: a re-sent call finds the reply its first run stored there
-- and returns it (with the server's time now), touching nothing else.
local token = nil
if ARGV[1] == 'r' then
  token = KEYS[#KEYS]
  local stored = redis.call('GET', token)
  if stored then
    local again = cmsgpack.unpack(stored)
    again[#again + 1] = server_us
    return again
  end
end
local record = ARGV[1] == '1' or token ~= nil
local min_px = tonumber(ARGV[3])
if ARGV[4] ~= '' and server_us > tonumber(ARGV[4]) then
  -- Past the caller's deadline: it has given up on this answer (timed out). Write nothing.
  return { -1, server_us }
end
-- The time in ticks (2^-10 ms), an integer.
local given
if ARGV[2] == '' then
  given = math.floor(server_us * 1024 / 1000)
else
  given = tonumber(ARGV[2])
end
-- Ticks until a debt of need units is repaid at rate units per tick, exactly.
local function repay(need, rate)
  local m = math.ceil(need / rate)
  if m * rate < need then m = m + 1 elseif (m - 1) * rate >= need then m = m - 1 end
  return m
end
local n = #KEYS
if token then n = n - 1 end
local out = {}
local plan = {}
local keep = {}
local all = true
for i = 1, n do
  local key = KEYS[i]
  local base = 5 + (i - 1) * 4
  local threshold = tonumber(ARGV[base + 1])
  local window_ms = tonumber(ARGV[base + 2])
  local cost = tonumber(ARGV[base + 3])
  local window = window_ms * 1024
  local o = (i - 1) * 5
  local now = given
  if ARGV[base] == 'l' then
    -- Sliding-window log.
    local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
    local newest = nil
    local live = 0
    if last[2] then
      newest = tonumber(last[2])
      if newest - now > window then
        -- Entries more than a window ahead: written under a clock that was ahead (a failover
        -- to a server whose clock is behind). Forget them rather than freeze the key.
        redis.call('ZREMRANGEBYSCORE', key, '(' .. string.format('%.0f', now), '+inf')
        last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
        newest = nil
        if last[2] then newest = tonumber(last[2]) end
      end
    end
    if newest then
      -- A clock behind the newest entry counts as at it (as in memory).
      if now < newest then now = newest end
      if record then
        -- Expired entries go whatever the outcome (as in memory): no later decision counts them.
        redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
        live = redis.call('ZCARD', key)
      else
        live = redis.call('ZCOUNT', key, '(' .. string.format('%.0f', now - window), '+inf')
      end
      if live > 0 then
        -- If this decision records nothing, the key must still live until its entries expire
        -- under this limit (a longer window than when they were written: a tier change).
        local px = math.ceil((window - (given - newest)) / 1024)
        if px < min_px then px = min_px end
        keep[i] = px
      end
    end
    local reset = 0
    if live > 0 then reset = window - (now - newest) end
    out[o + 3] = 0
    out[o + 4] = { double = reset / 1024 }
    out[o + 5] = now - given
    if cost <= threshold - live then
      out[o + 1] = 1
      out[o + 2] = threshold - live
      -- Members are "<time>-<n>", n (6 digits, so that they sort by n) counting the members
      -- already at that time: unique even when requests share a tick. The newest member
      -- carries the last n used at its time.
      local seq = 0
      if newest == now then seq = tonumber(string.sub(last[1], -6)) + 1 end
      plan[i] = { true, key, now, cost, window, threshold - live - cost, seq }
    else
      all = false
      out[o + 1] = 0
      if live >= threshold then out[o + 2] = 0 else out[o + 2] = threshold - live end
      if cost > threshold then
        out[o + 3] = -1
      else
        -- The request fits once the k oldest live entries have expired.
        local k = live + cost - threshold - 1
        local kth = redis.call('ZRANGEBYSCORE', key, '(' .. string.format('%.0f', now - window), '+inf', 'WITHSCORES', 'LIMIT', k, 1)
        out[o + 3] = window - (now - tonumber(kth[2]))
      end
    end
  else
    -- GCRA: the debt (the theoretical arrival time's lead over the last decision) in units of
    -- 1 / threshold tick, so that a request adds cost x window units and a tick repays threshold.
    local span = threshold * window
    local debt = 0
    local changed = false
    local raw = redis.call('GET', key)
    if raw then
      local at, d, ot, ow = struct.unpack('<dddd', raw)
      if at - now <= ow * 1024 then
        -- (A state more than a window ahead was written under a clock that was ahead: forgotten.)
        -- A clock behind the last decision counts as at it (as in memory).
        if now < at then now = at end
        local elapsed = now - at
        if elapsed >= ow * 1024 then
          debt = 0
        else
          debt = d - elapsed * ot
          if debt < 0 then debt = 0 end
        end
        if ot ~= threshold or ow ~= window_ms then
          -- The key's limit changed (a tier): the debt keeps its share of the window.
          debt = math.ceil(debt / (ot * 1024 * ow) * span)
          if debt > span then debt = span end
          changed = true
        end
      end
    end
    local needed = debt + cost * window
    out[o + 2] = math.floor((span - debt) / window)
    out[o + 4] = { double = debt / threshold / 1024 }
    out[o + 5] = now - given
    if cost <= threshold and needed <= span then
      out[o + 1] = 1
      out[o + 3] = 0
      plan[i] = { false, key, now, needed, window_ms, threshold, math.floor((span - needed) / window) }
    else
      all = false
      out[o + 1] = 0
      if cost > threshold then out[o + 3] = -1 else out[o + 3] = repay(needed - span, threshold) end
    end
    if changed and record then
      -- A decision (not a peek) under a changed limit: the new limit applies from now on,
      -- whatever this decision (as in memory), so that a refusal's wait holds. Overwritten
      -- below if every limit allows.
      local px = math.ceil((debt / threshold - (given - now)) / 1024)
      if px < min_px then px = min_px end
      redis.call('SET', key, struct.pack('<dddd', now, debt, threshold, window_ms), 'PX', px)
    end
  end
end
local recorded = record and all
for i = 1, n do
  if keep[i] and not recorded then redis.call('PEXPIRE', KEYS[i], keep[i], 'GT') end
end
if recorded then
  for i = 1, n do
    local p = plan[i]
    local key = p[2]
    local o = (i - 1) * 5
    if p[1] then
      local now, cost, window, seq = p[3], p[4], p[5], p[7]
      local done = 0
      while done < cost do
        local batch = {}
        local m = math.min(cost - done, 1000)
        for j = 1, m do
          batch[2 * j - 1] = now
          batch[2 * j] = string.format('%.0f-%06d', now, seq + done + j - 1)
        end
        redis.call('ZADD', key, unpack(batch))
        done = done + m
      end
      local px = math.ceil((window - (given - now)) / 1024)
      if px < min_px then px = min_px end
      redis.call('PEXPIRE', key, px)
      out[o + 2] = p[6]
      out[o + 4] = { double = window / 1024 }
    else
      local now, needed, window_ms, threshold = p[3], p[4], p[5], p[6]
      local px = math.ceil((needed / threshold - (given - now)) / 1024)
      if px < min_px then px = min_px end
      redis.call('SET', key, struct.pack('<dddd', now, needed, threshold, window_ms), 'PX', px)
      out[o + 2] = p[7]
      out[o + 4] = { double = needed / threshold / 1024 }
    end
  end
end
if token then
  -- The reply, for a re-sent call: kept until the deadline has passed (a call re-sent later
  -- writes nothing anyway), plus a second; 60 s when the caller has no deadline.
  local px = 60000
  if ARGV[4] ~= '' then px = math.ceil((tonumber(ARGV[4]) - server_us) / 1000) + 1000 end
  redis.call('SET', token, cmsgpack.pack(out), 'PX', px)
end
out[n * 5 + 1] = server_us
return out
`;

/** The SHA-1 of {@link DECIDE_SCRIPT}, as `EVALSHA` expects it. */
export const DECIDE_SHA = createHash('sha1').update(DECIDE_SCRIPT).digest('hex');
