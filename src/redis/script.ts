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
 * ARGV[1]: `1` to record when every limit allows, `0` to only check (peek), or `t` for the
 *   handshake: return `{ server time }` alone, touching no key (the other arguments absent).
 * ARGV[2], ARGV[3]: the time in milliseconds (a decimal) and in whole microseconds, or empty
 *   strings to read the server's clock (`TIME`, counted from 2027-01-15T08:00:00Z).
 * ARGV[4]: the shortest expiry to set, in milliseconds (at least 1).
 * ARGV[5]: the caller's deadline, in the server's microseconds (derived from the server time
 *   of an earlier reply: the handshake's, before the first decision), or empty when the caller
 *   has no timeout: a script that starts later (queued behind a pause, or replayed after a
 *   reconnect) writes nothing and returns `{ -1, server time }`.
 * ARGV[6 + 4i ..]: per limit i: the kind (`l`: sliding-window log, `g`: GCRA), threshold,
 *   window in whole milliseconds, cost.
 *
 * Returns a flat array, per limit: allowed (0/1), remaining (integer), retryAfter and
 * resetAfter: after recording when `record` and every limit allows, else as they stand before
 * the request (as `peek` says). The log replies with integers, in microseconds (retryAfter `-1`
 * for never); GCRA with doubles in milliseconds, as `{ double = x }` (Redis formats them exactly,
 * `%.17g`, where Lua's `string.format` costs about a microsecond each; `inf` for never). A plain
 * Lua number would be truncated to an integer. Last, the server's time in microseconds (from
 * which the caller learns the offset of its clock to the server's, for deadlines).
 *
 * Sliding-window log: a sorted set of one member per allowed unit, scored by the time in integer
 * microseconds (exact arithmetic); members are `<time>-<n>`, `n` (six digits) counting the
 * members already at that time, so two requests in the same microsecond stay distinct. An entry `t` is expired
 * when `t <= now - window`. GCRA: a string `"<TAT × threshold> <threshold> <window ms>"`.
 *
 * Every write sets the key's expiry to when its state is clear (`PEXPIRE` / `SET PX`), so idle
 * keys vanish without a sweep; a log decision that records nothing extends the expiry if the
 * limit's window grew (`PEXPIRE … GT`, Redis 7.0 or later). A rejected decision records nothing; like the in-memory
 * strategies, every decision (and peek) drops the log's expired entries, and a GCRA key whose
 * limit changed is converted.
 */
export const DECIDE_SCRIPT = `
local t = redis.call('TIME')
-- Microseconds from 2027-01-15T08:00:00Z (negative before it): times near the origin stay
-- small, so GCRA's time x threshold stays exact for large thresholds in the years around it.
local server_us = (tonumber(t[1]) - 1800000000) * 1000000 + tonumber(t[2])
if ARGV[1] == 't' then
  -- The handshake: the caller learns the server's clock before its first decision.
  return { server_us }
end
local record = ARGV[1] == '1'
local min_px = tonumber(ARGV[4])
if ARGV[5] ~= '' and server_us > tonumber(ARGV[5]) then
  -- Past the caller's deadline: it has given up on this answer (timed out). Write nothing.
  return { -1, server_us }
end
local now_ms, now_us
if ARGV[2] == '' then
  now_us = server_us
  now_ms = now_us / 1000
else
  now_ms = tonumber(ARGV[2])
  now_us = tonumber(ARGV[3])
end
local n = #KEYS
local out = {}
local plan = {}
local keep = {}
local all = true
for i = 1, n do
  local key = KEYS[i]
  local base = 6 + (i - 1) * 4
  local threshold = tonumber(ARGV[base + 1])
  local window_ms = tonumber(ARGV[base + 2])
  local cost = tonumber(ARGV[base + 3])
  local o = (i - 1) * 4
  if ARGV[base] == 'l' then
    -- Sliding-window log, in integer microseconds (numbers passed to redis.call are formatted
    -- by Redis itself, exactly).
    local window_us = window_ms * 1000
    local now = now_us
    local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
    local newest = nil
    local live = 0
    if last[2] then
      newest = tonumber(last[2])
      if newest > now + window_us then
        -- Entries more than a window ahead: written under a clock that was ahead (a failover
        -- to a server whose clock is behind). Forget them rather than freeze the key.
        redis.call('ZREMRANGEBYSCORE', key, '(' .. string.format('%.0f', now), '+inf')
        last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
        newest = nil
        if last[2] then newest = tonumber(last[2]) end
      end
    end
    if newest then
      -- A clock slightly behind the newest entry counts as at it (as in memory).
      if now < newest then now = newest end
      -- Expired entries go whatever the outcome (as in memory): no later decision counts them.
      redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window_us)
      live = redis.call('ZCARD', key)
      if live > 0 then
        -- If this decision records nothing, the key must still live until its entries expire
        -- under this limit (a longer window than when they were written: a tier change).
        local px = math.ceil((newest + window_us - now_us) / 1000)
        if px < min_px then px = min_px end
        keep[i] = px
      end
    end
    local reset_us = 0
    if live > 0 then reset_us = newest + window_us - now end
    out[o + 3] = 0
    out[o + 4] = reset_us
    if live + cost <= threshold then
      out[o + 1] = 1
      out[o + 2] = threshold - live
      -- Members are "<time>-<n>", n (6 digits, so that they sort by n) counting the members
      -- already at that time: unique even when requests share a microsecond. The newest
      -- member carries the last n used at its time.
      local seq = 0
      if newest == now then seq = tonumber(string.sub(last[1], -6)) + 1 end
      plan[i] = { true, key, now, cost, window_us, now_us, threshold - live - cost, seq }
    else
      all = false
      out[o + 1] = 0
      if live >= threshold then out[o + 2] = 0 else out[o + 2] = threshold - live end
      if cost > threshold then
        out[o + 3] = -1
      else
        -- The request fits once the k oldest entries have expired.
        local kth = redis.call('ZRANGE', key, live + cost - threshold - 1, live + cost - threshold - 1, 'WITHSCORES')
        out[o + 3] = tonumber(kth[2]) + window_us - now
      end
    end
  else
    -- GCRA, in milliseconds scaled by the threshold (TAT × threshold).
    local span = threshold * window_ms
    local now = now_ms * threshold
    local tat = -math.huge
    local limit = ARGV[base + 1] .. ' ' .. ARGV[base + 2]
    local raw = redis.call('GET', key)
    local changed = false
    if raw then
      local at = string.find(raw, ' ', 1, true)
      local old = string.sub(raw, at + 1)
      tat = tonumber(string.sub(raw, 1, at - 1))
      if old ~= limit then
        -- The key's limit changed (a tier): it keeps the used share of its burst.
        local ot, ow = string.match(old, '^(%S+) (%S+)$')
        ot = tonumber(ot)
        local old_span = ot * tonumber(ow)
        local old_debt = tat - now_ms * ot
        local share = 0
        if old_debt >= old_span then share = 1 elseif old_debt > 0 then share = old_debt / old_span end
        tat = now + share * span
        changed = true
      end
    end
    local debt = tat - now
    local from = now
    if debt > span + span then
      -- A TAT more than a window too far ahead: written under a clock that was ahead. Forget it.
      debt = 0
      tat = now
    elseif debt > span then
      debt = span
      from = tat - span
    elseif not (debt > 0) then
      debt = 0
    end
    local needed = debt + cost * window_ms
    out[o + 2] = math.floor((span - debt) / window_ms)
    out[o + 4] = { double = debt / threshold }
    if needed <= span then
      out[o + 1] = 1
      out[o + 3] = 0
      plan[i] = { false, key, from + needed, threshold, limit, from + needed - now, math.floor((span - needed) / window_ms), needed / threshold }
    else
      all = false
      out[o + 1] = 0
      if cost > threshold then out[o + 3] = { double = math.huge } else out[o + 3] = { double = (needed - span) / threshold } end
    end
    if changed then
      -- The new limit applies from now on, whatever this decision (as in memory).
      local px = math.ceil(debt / threshold)
      if px < min_px then px = min_px end
      redis.call('SET', key, string.format('%.17g', tat) .. ' ' .. limit, 'PX', px)
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
    local o = (i - 1) * 4
    if p[1] then
      local now, cost, window_us, real_now, seq = p[3], p[4], p[5], p[6], p[8]
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
      local px = math.ceil((now + window_us - real_now) / 1000)
      if px < min_px then px = min_px end
      redis.call('PEXPIRE', key, px)
      out[o + 2] = p[7]
      out[o + 4] = window_us
    else
      local tat, threshold, limit, ahead = p[3], p[4], p[5], p[6]
      local px = math.ceil(ahead / threshold)
      if px < min_px then px = min_px end
      redis.call('SET', key, string.format('%.17g', tat) .. ' ' .. limit, 'PX', px)
      out[o + 2] = p[7]
      out[o + 4] = { double = p[8] }
    end
  end
end
out[n * 4 + 1] = server_us
return out
`;

/** The SHA-1 of {@link DECIDE_SCRIPT}, as `EVALSHA` expects it. */
export const DECIDE_SHA = createHash('sha1').update(DECIDE_SCRIPT).digest('hex');
