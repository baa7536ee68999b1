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
 * ARGV[1]: `1` to record when every limit allows, `0` to only check (peek).
 * ARGV[2], ARGV[3]: the time in milliseconds (a decimal) and in whole microseconds, or empty
 *   strings to read the server's clock (`TIME`, counted from 2023-11-14T22:13:20Z).
 * ARGV[4]: the shortest expiry to set, in milliseconds (at least 1).
 * ARGV[5 + 4i ..]: per limit i: the kind (`l`: sliding-window log, `g`: GCRA), threshold,
 *   window in whole milliseconds, cost.
 *
 * Returns a flat array, per limit: allowed (0/1), remaining (integer), retryAfter in ms (a
 * decimal string, `inf` for never), resetAfter in ms (a decimal string): after recording when
 * `record` and every limit allows, else as they stand before the request (as `peek` says). Decimal strings, because
 * Redis truncates Lua numbers to integers in replies.
 *
 * Sliding-window log: a sorted set of one member per allowed unit, scored by the time in integer
 * microseconds (exact arithmetic); members are `<time>-<n>`, `n` counting the members already
 * at that time, so two requests in the same microsecond stay distinct. An entry `t` is expired
 * when `t <= now - window`. GCRA: a string `"<TAT × threshold> <threshold> <window>"`.
 *
 * Every write sets the key's expiry to when its state is clear (`PEXPIRE` / `SET PX`), so idle
 * keys vanish without a sweep. A rejected decision records nothing; like the in-memory
 * strategies, every decision (and peek) drops the log's expired entries, and a GCRA key whose
 * limit changed is converted.
 */
export const DECIDE_SCRIPT = `
local record = ARGV[1] == '1'
local min_px = tonumber(ARGV[4])
local now_ms, now_us
if ARGV[2] == '' then
  local t = redis.call('TIME')
  -- Microseconds since 2023-11-14T22:13:20Z, so that times stay small enough for exact
  -- arithmetic (GCRA scales them by the threshold).
  now_us = (tonumber(t[1]) - 1700000000) * 1000000 + tonumber(t[2])
  now_ms = now_us / 1000
else
  now_ms = tonumber(ARGV[2])
  now_us = tonumber(ARGV[3])
end
local function fmt(x)
  if x == math.huge then return 'inf' end
  return string.format('%.17g', x)
end
local n = #KEYS
local out = {}
local plan = {}
local all = true
for i = 1, n do
  local key = KEYS[i]
  local base = 5 + (i - 1) * 4
  local kind = ARGV[base]
  local threshold = tonumber(ARGV[base + 1])
  local window_ms = tonumber(ARGV[base + 2])
  local cost = tonumber(ARGV[base + 3])
  local allowed, remaining, retry_ms, reset_ms
  if kind == 'l' then
    local window_us = window_ms * 1000
    local now = now_us
    local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
    local newest = nil
    if last[2] then
      newest = tonumber(last[2])
      if now < newest then now = newest end
    end
    local cutoff = now - window_us
    local live = 0
    if newest then
      -- Expired entries go whatever the outcome (as in memory): no later decision counts them.
      local removed = redis.call('ZREMRANGEBYSCORE', key, '-inf', string.format('%.0f', cutoff))
      live = redis.call('ZCARD', key)
      if removed > 0 and live > 0 then
        local px = math.ceil((newest + window_us - now_us) / 1000)
        if px < min_px then px = min_px end
        redis.call('PEXPIRE', key, px)
      end
    end
    if live + cost <= threshold then
      allowed = 1
      remaining = threshold - live
      reset_ms = (live == 0) and 0 or (newest + window_us - now) / 1000
      retry_ms = 0
      -- What the result says if every limit allows and the request is recorded.
      plan[i] = { 'l', key, now, cutoff, cost, window_us, now_us, threshold - live - cost, window_ms }
    else
      allowed = 0
      all = false
      remaining = (live >= threshold) and 0 or (threshold - live)
      reset_ms = (live == 0) and 0 or (newest + window_us - now) / 1000
      if cost > threshold then
        retry_ms = math.huge
      else
        local k = live + cost - threshold
        local kth = redis.call('ZRANGE', key, k - 1, k - 1, 'WITHSCORES')
        retry_ms = (tonumber(kth[2]) + window_us - now) / 1000
      end
    end
  else
    local span = threshold * window_ms
    local now = now_ms * threshold
    local tat = -math.huge
    local raw = redis.call('GET', key)
    local changed = false
    if raw then
      local t, ot, ow = string.match(raw, '^(%S+) (%S+) (%S+)$')
      t = tonumber(t)
      ot = tonumber(ot)
      ow = tonumber(ow)
      if ot == threshold and ow == window_ms then
        tat = t
      else
        local old_span = ot * ow
        local old_debt = t - now_ms * ot
        local share = 0
        if old_debt >= old_span then share = 1 elseif old_debt > 0 then share = old_debt / old_span end
        tat = now + share * span
        changed = true
      end
    end
    local debt = tat - now
    local from = now
    if debt > span then
      debt = span
      from = tat - span
    elseif not (debt > 0) then
      debt = 0
    end
    local needed = debt + cost * window_ms
    if needed <= span then
      allowed = 1
      remaining = math.floor((span - debt) / window_ms)
      retry_ms = 0
      reset_ms = debt / threshold
      plan[i] = { 'g', key, from + needed, threshold, window_ms, from + needed - now,
        math.floor((span - needed) / window_ms), needed / threshold }
    else
      allowed = 0
      all = false
      remaining = math.floor((span - debt) / window_ms)
      reset_ms = debt / threshold
      if cost > threshold then retry_ms = math.huge else retry_ms = (needed - span) / threshold end
    end
    if changed then
      -- The key's limit changed: the new one applies from now on, whatever this decision.
      local px = math.ceil(debt / threshold)
      if px < min_px then px = min_px end
      redis.call('SET', key, fmt(tat) .. ' ' .. fmt(threshold) .. ' ' .. fmt(window_ms), 'PX', px)
    end
  end
  out[(i - 1) * 4 + 1] = allowed
  out[(i - 1) * 4 + 2] = remaining
  out[(i - 1) * 4 + 3] = fmt(retry_ms)
  out[(i - 1) * 4 + 4] = fmt(reset_ms)
end
if record and all then
  for i = 1, n do
    local p = plan[i]
    local key = p[2]
    if p[1] == 'l' then
      local now, cutoff, cost, window_us, real_now = p[3], p[4], p[5], p[6], p[7]
      local stamp = string.format('%.0f', now)
      local seq = redis.call('ZCOUNT', key, stamp, stamp)
      local done = 0
      while done < cost do
        local batch = {}
        local m = math.min(cost - done, 1000)
        for j = 1, m do
          batch[2 * j - 1] = stamp
          batch[2 * j] = stamp .. '-' .. (seq + done + j - 1)
        end
        redis.call('ZADD', key, unpack(batch))
        done = done + m
      end
      local px = math.ceil((now + window_us - real_now) / 1000)
      if px < min_px then px = min_px end
      redis.call('PEXPIRE', key, px)
      out[(i - 1) * 4 + 2] = p[8]
      out[(i - 1) * 4 + 4] = fmt(p[9])
    else
      local tat, threshold, window_ms, ahead = p[3], p[4], p[5], p[6]
      local px = math.ceil(ahead / threshold)
      if px < min_px then px = min_px end
      redis.call('SET', key, fmt(tat) .. ' ' .. fmt(threshold) .. ' ' .. fmt(window_ms), 'PX', px)
      out[(i - 1) * 4 + 2] = p[7]
      out[(i - 1) * 4 + 4] = fmt(p[8])
    end
  end
end
return out
`;

/** The SHA-1 of {@link DECIDE_SCRIPT}, as `EVALSHA` expects it. */
export const DECIDE_SHA = createHash('sha1').update(DECIDE_SCRIPT).digest('hex');
