/**
 * The one Lua script behind every Redis decision — single decisions, micro-batches of them, and
 * `RateLimitGroup` decisions — assembled from a shared frame and each algorithm's fragment
 * (`./algorithms/`). The argument layout and the reply are read and written in one place,
 * `./protocol.ts`.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import type { RedisAlgorithm } from './algorithm.js';
import { GCRA_ON_REDIS } from './algorithms/gcra.js';
import { SLIDING_WINDOW_LOG_ON_REDIS } from './algorithms/sliding-window-log.js';

/** @internal The algorithms the script decides, by their `id`. */
export const ALGORITHMS: readonly RedisAlgorithm[] = [SLIDING_WINDOW_LOG_ON_REDIS, GCRA_ON_REDIS];

/** The frame before the algorithms' fragments: the clock, the modes, the helpers. */
const HEAD = `
local t = redis.call('TIME')
-- Microseconds from 2027-01-15T08:00:00Z (negative before it).
local server_us = (tonumber(t[1]) - 1800000000) * 1000000 + tonumber(t[2])
local mode = ARGV[1]
if mode == 't' then return { server_us } end
local n = #KEYS
local token = nil
if mode == 'r' then
  -- The last key is the call's token: a call re-sent after a reconnect finds the reply of its
  -- first run there and returns it (with the server's time now), touching nothing else.
  token = KEYS[n]
  n = n - 1
  local stored = redis.call('GET', token)
  if stored then
    local again = cmsgpack.unpack(stored)
    again[#again + 1] = server_us
    return again
  end
end
-- Past the latest deadline of the call: nothing to decide, nothing written.
if ARGV[4] ~= '' and server_us > tonumber(ARGV[4]) then return { -1, server_us } end
local server_ticks = math.floor(server_us * 1024 / 1000)
local min_px = tonumber(ARGV[3])
local own_time = ARGV[2] == 'm'
local stride = 4
if own_time then stride = 5 end
`;

/** The frame after the fragments: the units, each all or nothing, then the reply. */
const TAIL = `
local out = {}
local recorded = false
-- One unit: its entries checked (reads only), then all recorded if every one allows and the
-- unit records, else tidied; values after recording, or as checked. (A single entry, the
-- common case, keeps its values in locals.)
local function unit(k0, a0, count, record)
  if count == 1 then
    local check, commit, tidy = algorithm(ARGV[a0])
    local given = server_ticks
    if own_time then given = tonumber(ARGV[a0 + 4]) end
    local w, l, s, sh, e1, e2, e3, e4, e5, e6, e7 = check(KEYS[k0 + 1], tonumber(ARGV[a0 + 1]), tonumber(ARGV[a0 + 2]), tonumber(ARGV[a0 + 3]), given)
    if record then
      if w == 0 then
        l, s = commit(l, s, sh, e1, e2, e3, e4, e5, e6, e7)
        recorded = true
      else
        tidy(l, s, sh, e1, e2, e3, e4, e5, e6, e7)
      end
    end
    local o = k0 * 4
    out[o + 1] = w
    out[o + 2] = l
    out[o + 3] = s
    out[o + 4] = sh
    return
  end
  local plans = {}
  local all = true
  for j = 1, count do
    local b = a0 + (j - 1) * stride
    local given = server_ticks
    if own_time then given = tonumber(ARGV[b + 4]) end
    local check = algorithm(ARGV[b])
    local p = { check(KEYS[k0 + j], tonumber(ARGV[b + 1]), tonumber(ARGV[b + 2]), tonumber(ARGV[b + 3]), given) }
    plans[j] = p
    if p[1] ~= 0 then all = false end
  end
  for j = 1, count do
    local p = plans[j]
    if record then
      local _, commit, tidy = algorithm(ARGV[a0 + (j - 1) * stride])
      if all then p[2], p[3] = commit(unpack(p, 2, 11)) else tidy(unpack(p, 2, 11)) end
    end
    local o = (k0 + j - 1) * 4
    out[o + 1] = p[1]
    out[o + 2] = p[2]
    out[o + 3] = p[3]
    out[o + 4] = p[4]
  end
  if record and all then recorded = true end
end
local a = 5
local k = 0
while k < n do
  local count = tonumber(ARGV[a])
  local deadline = ARGV[a + 2]
  local status = nil
  local status_text = nil
  if deadline ~= '' and server_us > tonumber(deadline) then
    -- Past this unit's deadline: its caller has given up on it. Nothing written.
    status = -3
  else
    local ok, err = pcall(unit, k, a + 3, count, ARGV[a + 1] == '1')
    if not ok then
      -- Redis's own errors are tables; anything else is the script meeting a value it did not
      -- write (a tampered key), said so, with the key.
      if type(err) == 'table' then err = err.err
      else err = 'ERR ratewarden: unexpected data in ' .. KEYS[k + 1] .. ' (' .. tostring(err) .. ')' end
      -- A unit's checks only read, and Redis does not stop a script that has written: a unit
      -- that fails in Redis (WRONGTYPE) has written nothing.
      status = -2
      status_text = tostring(err)
    end
  end
  if status then
    for j = 1, count do
      local o = (k + j - 1) * 4
      out[o + 1] = status
      if status == -2 then out[o + 2] = status_text else out[o + 2] = 0 end
      out[o + 3] = 0
      out[o + 4] = 0
    end
  end
  a = a + 3 + count * stride
  k = k + count
end
if token and recorded then
  -- The reply, for a re-sent call: kept until the deadline has passed (a call re-sent later
  -- writes nothing anyway), plus a second; 60 s when the call has no deadline.
  local px = 60000
  if ARGV[4] ~= '' then px = math.ceil((tonumber(ARGV[4]) - server_us) / 1000) + 1000 end
  redis.call('SET', token, cmsgpack.pack(out), 'PX', px)
end
out[n * 4 + 1] = server_us
return out
`;

/**
 * The algorithms' functions, defined only for the algorithms the call uses (a closure costs
 * Redis time at every call), then the dispatch from an id to them.
 */
const ALGORITHM_FUNCTIONS =
  ALGORITHMS.map((a) => `local uses_${a.id}, ${a.id}_check, ${a.id}_commit, ${a.id}_tidy = false\n`).join('') +
  `do
  local a = 5
  while a <= #ARGV do
    local count = tonumber(ARGV[a])
    for j = 0, count - 1 do
      local id = ARGV[a + 3 + j * stride]
${ALGORITHMS.map((a) => `      if id == '${a.id}' then uses_${a.id} = true end\n`).join('')}    end
    a = a + 3 + count * stride
  end
end
` +
  ALGORITHMS.map((a) => `if uses_${a.id} then\n${a.lua}end\n`).join('') +
  'local function algorithm(id)\n' +
  ALGORITHMS.map((a) => `  if id == '${a.id}' then return ${a.id}_check, ${a.id}_commit, ${a.id}_tidy end\n`).join('') +
  "  error('unknown algorithm ' .. tostring(id))\nend\n";

/**
 * The Lua script of every Redis decision: one or more **units** per `EVALSHA`, each decided all
 * or nothing, atomically (the whole script is one atomic step on the server). A single decision
 * is a unit of one entry; a `RateLimitGroup` decision is a unit of one entry per limit; a
 * micro-batch is several units, decided in order, each on its own.
 *
 * KEYS: one key per entry, in order (a key may appear in several units: they run in order);
 * then, in mode `r`, the call's token (in the first key's hash slot).
 *
 * ARGV:
 * 1. the mode: `d` to decide; `r` to decide at most once (for clients that re-send a call after
 *    a reconnect: the token, if set, holds the reply of the call's first run, returned unchanged
 *    with the server's time now; else the units run and, when any recorded, the reply is stored
 *    there until a second after the call's deadline, or 60 s without one); `t`, the handshake:
 *    return `{ server time }` alone, touching no key;
 * 2. the time: empty to time every entry by the server's clock (`TIME`, in microseconds from
 *    2027-01-15T08:00:00Z, converted to ticks of 2^-10 ms), or `m` when each entry carries its
 *    own time (below);
 * 3. the shortest expiry to set, in milliseconds (at least 1);
 * 4. the latest of the units' deadlines, in the server's microseconds, or empty for none: a
 *    script that starts later writes nothing and returns `{ -1, server time }`;
 * 5. then per unit: its number of entries; `1` to record (when every entry allows) or `0` to only
 *    check (`peek`); its deadline in the server's microseconds, or empty (past it, the unit
 *    writes nothing and each of its entries' wait is `-3`); then per entry: the algorithm's id,
 *    the threshold, the window in whole milliseconds, the cost, and with `m` the entry's time in
 *    **ticks** (an integer: the limiter's reading on the grid of `src/time.ts`).
 *
 * Returns a flat array, four integers per entry, then the server's time in microseconds:
 * - the wait in ticks: `0` when the entry allows, a positive integer when it refuses, `-1` for
 *   never (cost above the threshold), `-3` when its unit's deadline had passed (nothing written),
 *   `-2` when Redis refused one of the unit's commands (then the second value is Redis's error
 *   message, a string; the unit wrote nothing, the other units go on: the script catches the
 *   error with Lua's `pcall`);
 * - `left`: the remaining count, after recording when the unit recorded, else before the request
 *   (for a refused sliding-window log, `threshold − live`, below 0 when more are live than the
 *   threshold: the caller reports 0);
 * - the state, read by the algorithm (`resetMs`): the log's ticks until the window is clear,
 *   GCRA's debt;
 * - the shift in ticks: how far the time decided at is after the time given, when that was behind
 *   the key's state (the wait counts from there).
 *
 * A unit recorded exactly when it records and every entry's wait is `0`.
 *
 * The arithmetic is the in-memory strategies', on the same grid, and exact: times are integers in
 * ticks and only their differences are used (Lua numbers are doubles; Redis formats the numbers
 * passed to `redis.call` exactly). Every write sets the key's expiry to when its state is clear,
 * so idle keys vanish without a sweep (`PEXPIRE … GT` needs Redis 7.0 or later).
 */
export const DECIDE_SCRIPT = HEAD + ALGORITHM_FUNCTIONS + TAIL;

/** The SHA-1 of {@link DECIDE_SCRIPT}, as `EVALSHA` expects it. */
export const DECIDE_SHA = createHash('sha1').update(DECIDE_SCRIPT).digest('hex');
