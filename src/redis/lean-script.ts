/**
 * The lean Lua script behind single decisions: one limit per decision, one or more independent
 * decisions per `EVALSHA` (a micro-batch). A `RateLimitGroup`'s all-or-nothing decision over
 * several limits has its own script (`./script.ts`); both keep the same key layout and state.
 *
 * @module
 */
import { createHash } from 'node:crypto';

/**
 * Decides each of one or more single-limit decisions on its own, in order, atomically on the
 * server (the whole script is one atomic step).
 *
 * KEYS: one key per decision (a key may appear more than once: its decisions run in order),
 * then, in mode `r`, the call's token (in the first key's hash slot).
 * ARGV[1]: `1` to decide, `r` to decide at most once (for clients that re-send a call after a
 *   reconnect: the token, if set, holds the reply of the call's first run, returned unchanged
 *   with the server's time now; else the decisions run, and when any recorded, the reply is
 *   stored there with an expiry of the time left to the deadline plus 1 s, or 60 s without a
 *   deadline), or `t` for the handshake: return `{ server time }` alone, touching no key.
 * ARGV[2]: an empty string to time every decision by the server's clock (`TIME`, counted from
 *   2027-01-15T08:00:00Z, converted to ticks of 2^-10 ms), or `m` when each decision carries its
 *   own time (a fifth argument, below).
 * ARGV[3]: the shortest expiry to set, in milliseconds (at least 1).
 * ARGV[4]: the latest of the decisions' deadlines, in the server's microseconds, or empty for
 *   none: a script that starts later writes nothing and returns `{ -1, server time }`.
 * ARGV[5 ..]: per decision: the kind (`g`: GCRA, `l`: sliding-window log; upper case `G` / `L`
 *   to only check, as `peek`), threshold, window in whole milliseconds, cost, its deadline in the
 *   server's microseconds (or empty for none: past it, the decision writes nothing and its wait
 *   is `-3`); and with `m`, the
 *   decision's time in **ticks** (an integer: the limiter's reading on the grid of
 *   `src/time.ts`), so that decisions batched from different readings are each decided at
 *   their own.
 *
 * Returns a flat array, four values per decision, then the server's time in microseconds:
 * - the wait in ticks: `0` when allowed, a positive integer when rejected, `-1` for never (cost
 *   above the threshold), `-3` when the decision's deadline had passed (nothing written), or `-2`
 *   when Redis refused one of its commands (then the second value is Redis's error message, a
 *   string; every command that fails here — `WRONGTYPE` on a key of another type — is the
 *   decision's first on its key, so nothing of it was written; the other decisions go on, as
 *   the script catches the error with Lua's `pcall`);
 * - remaining, after recording when allowed and recording, else before the request (for a refused
 *   sliding-window-log decision `threshold − live`, below 0 when more entries are live than the
 *   threshold: the caller reports 0);
 * - the reset: for the log, ticks until the window is clear; for GCRA, the debt (ticks × threshold),
 *   so that `resetAfter` in milliseconds is `debt / threshold / 1024`, computed by the caller as
 *   the in-memory strategy computes it;
 * - the shift in ticks: how far the time decided at is after the time given, when that was behind
 *   the key's state (the wait counts from there).
 *
 * The arithmetic, key layout and expiries are those of `./script.ts` (see there): the in-memory
 * strategies' decisions, exactly, on the same grid.
 */
export const LEAN_SCRIPT = `
local t = redis.call('TIME')
local server_us = (tonumber(t[1]) - 1800000000) * 1000000 + tonumber(t[2])
local mode = ARGV[1]
if mode == 't' then return { server_us } end
local n = #KEYS
local token = nil
if mode == 'r' then
  token = KEYS[n]
  n = n - 1
  local stored = redis.call('GET', token)
  if stored then
    local again = cmsgpack.unpack(stored)
    again[#again + 1] = server_us
    return again
  end
end
if ARGV[4] ~= '' and server_us > tonumber(ARGV[4]) then return { -1, server_us } end
-- The time in ticks: the server's for every decision, or each decision's own (a 5th argument).
local given = 0
local stride = 5
if ARGV[2] == '' then given = math.floor(server_us * 1024 / 1000) else stride = 6 end
local min_px = tonumber(ARGV[3])
local out = {}
local recorded = false

local function repay(need, rate)
  local m = math.ceil(need / rate)
  if m * rate < need then m = m + 1 elseif (m - 1) * rate >= need then m = m - 1 end
  return m
end

local function gcra(key, record, threshold, window_ms, cost, o)
  local window = window_ms * 1024
  local span = threshold * window
  local now = given
  local debt = 0
  local changed = false
  local raw = redis.call('GET', key)
  if raw then
    local at, d, ot, ow = struct.unpack('<dddd', raw)
    if at - now <= ow * 1024 then
      if now < at then now = at end
      local elapsed = now - at
      if elapsed < ow * 1024 then
        debt = d - elapsed * ot
        if debt < 0 then debt = 0 end
      end
      if ot ~= threshold or ow ~= window_ms then
        debt = math.ceil(debt / (ot * 1024 * ow) * span)
        if debt > span then debt = span end
        changed = true
      end
    end
  end
  local needed = debt + cost * window
  out[o + 4] = now - given
  if cost <= threshold and needed <= span then
    out[o + 1] = 0
    if record then
      local px = math.ceil((needed / threshold - (given - now)) / 1024)
      if px < min_px then px = min_px end
      redis.call('SET', key, struct.pack('<dddd', now, needed, threshold, window_ms), 'PX', px)
      recorded = true
      debt = needed
    end
  else
    if cost > threshold then out[o + 1] = -1 else out[o + 1] = repay(needed - span, threshold) end
    if changed and record then
      local px = math.ceil((debt / threshold - (given - now)) / 1024)
      if px < min_px then px = min_px end
      redis.call('SET', key, struct.pack('<dddd', now, debt, threshold, window_ms), 'PX', px)
    end
  end
  out[o + 2] = math.floor((span - debt) / window)
  out[o + 3] = debt
end

local function log(key, record, threshold, window_ms, cost, o)
  local window = window_ms * 1024
  local now = given
  local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  local newest = nil
  local live = 0
  if last[2] then
    newest = tonumber(last[2])
    if newest - now > window then
      redis.call('ZREMRANGEBYSCORE', key, '(' .. string.format('%.0f', now), '+inf')
      last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
      newest = nil
      if last[2] then newest = tonumber(last[2]) end
    end
  end
  if newest then
    if now < newest then now = newest end
    if record then
      redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
      live = redis.call('ZCARD', key)
    else
      live = redis.call('ZCOUNT', key, '(' .. string.format('%.0f', now - window), '+inf')
    end
  end
  out[o + 4] = now - given
  if cost <= threshold - live then
    out[o + 1] = 0
    if record then
      local seq = 0
      if newest == now then seq = tonumber(string.sub(last[1], -6)) + 1 end
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
      recorded = true
      out[o + 2] = threshold - live - cost
      out[o + 3] = window
      return
    end
    out[o + 2] = threshold - live
  else
    -- threshold - live: below 0 when more are live than the threshold (a lowered limit); the
    -- caller reports 0, and its block cache tells the cases apart.
    out[o + 2] = threshold - live
    if cost > threshold then
      out[o + 1] = -1
    else
      -- The request fits once the k + 1 oldest live entries have expired.
      local k = live + cost - threshold - 1
      local kth
      if record then
        -- The expired entries were just removed: the k-th live entry is the k-th (0-based).
        kth = redis.call('ZRANGE', key, k, k, 'WITHSCORES')
      else
        kth = redis.call('ZRANGEBYSCORE', key, '(' .. string.format('%.0f', now - window), '+inf', 'WITHSCORES', 'LIMIT', k, 1)
      end
      out[o + 1] = window - (now - tonumber(kth[2]))
    end
  end
  if live > 0 then
    out[o + 3] = window - (now - newest)
    -- Nothing recorded: the key must still live until its entries expire under this limit (a
    -- longer window than when they were written: a tier change).
    local px = math.ceil((window - (given - newest)) / 1024)
    if px < min_px then px = min_px end
    redis.call('PEXPIRE', key, px, 'GT')
  else
    out[o + 3] = 0
  end
end

for i = 1, n do
  local a = 5 + stride * (i - 1)
  if stride == 6 then given = tonumber(ARGV[a + 5]) end
  local kind = ARGV[a]
  local o = (i - 1) * 4
  local ok, err
  local deadline = ARGV[a + 4]
  if deadline ~= '' and server_us > tonumber(deadline) then
    -- Past this decision's deadline: its caller has given up on it (timed out). Write nothing.
    ok = true
    out[o + 1] = -3
    out[o + 2] = 0
    out[o + 3] = 0
    out[o + 4] = 0
  elseif kind == 'g' or kind == 'G' then
    ok, err = pcall(gcra, KEYS[i], kind == 'g', tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3]), o)
  else
    ok, err = pcall(log, KEYS[i], kind == 'l', tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3]), o)
  end
  if not ok then
    if type(err) == 'table' then err = err.err end
    out[o + 1] = -2
    out[o + 2] = tostring(err)
    out[o + 3] = 0
    out[o + 4] = 0
  end
end
if token and recorded then
  local px = 60000
  if ARGV[4] ~= '' then px = math.ceil((tonumber(ARGV[4]) - server_us) / 1000) + 1000 end
  redis.call('SET', token, cmsgpack.pack(out), 'PX', px)
end
out[n * 4 + 1] = server_us
return out
`;

/** The SHA-1 of {@link LEAN_SCRIPT}, as `EVALSHA` expects it. */
export const LEAN_SHA = createHash('sha1').update(LEAN_SCRIPT).digest('hex');
