/**
 * The one Lua script behind every Redis decision — single decisions, micro-batches of them, and
 * `RateLimitGroup` decisions — assembled from a shared frame and each algorithm's fragment
 * (`./algorithms/`). The argument layout and the reply are read and written in one place,
 * `./protocol.ts`.
 *
 * @module
 */
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
-- The reservation id of the unit being run (its members, its GCRA state), or nil.
local rid = nil
`;

/** The frame after the fragments: the units, each all or nothing, then the reply. */
const TAIL = `
local out = {}
-- Reservations' tickets (two values per entry of a reserving unit), after the entries' values.
local tickets = {}
local recorded = false
local function fmt_int(x) return string.format('%.0f', x) end
-- An entry's first argument: the algorithm's id, then, when the quota blocks, its block in ms
-- and 'e' when refused attempts extend it.
local function spec(s)
  if #s == 1 then return s, 0, false end
  local id, ms, ext = string.match(s, '^(%l)(%d+)(e?)$')
  if id == nil then error({ err = 'ERR ratewarden: not an entry of the script: ' .. string.sub(s, 1, 40) }) end
  return id, tonumber(ms), ext == 'e'
end
-- The end (ticks) of the block of the key, if it is blocked at given.
local function block_end(key, given)
  local v = redis.call('GET', key .. ':block')
  if not v then return nil end
  local e = tonumber(v)
  if e == nil or e % 1 ~= 0 then error({ err = 'ERR ratewarden: ' .. key .. ':block does not hold a block written by ratewarden' }) end
  if e > given then return e end
  return nil
end
local function set_block(key, e, given)
  local px = math.ceil((e - given) / 1024)
  if px < min_px then px = min_px end
  redis.call('SET', key .. ':block', fmt_int(e), 'PX', px)
  recorded = true
end
-- The reply of an entry refused by a block ending at e: the wait until then plus what the
-- algorithm still needs then (a peek at e), remaining 0, a state of at least the block's, and
-- for shift -1 - the block's remaining ticks (what says "blocked").
local function blocked(check, bstate, key, threshold, window_ms, cost, given, e, state)
  local bt = e - given
  if cost > threshold then return -1, 0, bstate(state, bt, threshold), 0 end
  local we, _, _, she = check(key, threshold, window_ms, cost, e)
  return bt + she + we, 0, bstate(state, bt, threshold), -bt - 1
end
-- A decision unit (op '1' records, '0' checks, 'v' records with tickets): its entries checked
-- (reads only), then all recorded if every one allows, no key is blocked and the unit records,
-- else tidied, and a refused entry (cost up to its threshold) of a recording unit starts or
-- (extending) restarts its block. Values after recording, or as checked.
local function decide(k0, a0, count, op, tb)
  local record = op ~= '0'
  if count == 1 then
    -- A single entry, the common case, keeps its values in locals.
    local s0 = ARGV[a0]
    local id, bms, ext = s0, 0, false
    if #s0 > 1 then id, bms, ext = spec(s0) end
    local check, commit, tidy, bstate = algorithm(id)
    local given = server_ticks
    if own_time then given = tonumber(ARGV[a0 + 4]) end
    local key = KEYS[k0 + 1]
    local threshold, window_ms, cost = tonumber(ARGV[a0 + 1]), tonumber(ARGV[a0 + 2]), tonumber(ARGV[a0 + 3])
    local o = k0 * 4
    local w, l, s, sh, e1, e2, e3, e4, e5, e6, e7 = check(key, threshold, window_ms, cost, given)
    local e = block_end(key, given)
    if e == nil and record and w > 0 and bms > 0 then
      -- Refused by the limit: the block starts (and the refusal reports it).
      e = given + bms * 1024
      local r1, r2, r3, r4 = blocked(check, bstate, key, threshold, window_ms, cost, given, e, s)
      tidy(l, s, sh, e1, e2, e3, e4, e5, e6, e7)
      set_block(key, e, given)
      out[o + 1], out[o + 2], out[o + 3], out[o + 4] = r1, r2, r3, r4
      return
    end
    if e then
      if record and ext and cost <= threshold and given + bms * 1024 > e then
        -- A refused attempt restarts the block.
        e = given + bms * 1024
        local r1, r2, r3, r4 = blocked(check, bstate, key, threshold, window_ms, cost, given, e, s)
        set_block(key, e, given)
        out[o + 1], out[o + 2], out[o + 3], out[o + 4] = r1, r2, r3, r4
        return
      end
      out[o + 1], out[o + 2], out[o + 3], out[o + 4] = blocked(check, bstate, key, threshold, window_ms, cost, given, e, s)
      return
    end
    if record then
      if w == 0 then
        local n0
        l, s, n0 = commit(l, s, sh, e1, e2, e3, e4, e5, e6, e7)
        recorded = true
        if tb then
          tickets[tb + 1] = given + sh
          tickets[tb + 2] = n0
        end
      else
        tidy(l, s, sh, e1, e2, e3, e4, e5, e6, e7)
      end
    end
    out[o + 1] = w
    out[o + 2] = l
    out[o + 3] = s
    out[o + 4] = sh
    return
  end
  -- Several entries (a group): every read first, then the writes.
  local plans = {}
  local all = true
  for j = 1, count do
    local b = a0 + (j - 1) * stride
    local id, bms, ext = spec(ARGV[b])
    local check, _, _, bstate = algorithm(id)
    local given = server_ticks
    if own_time then given = tonumber(ARGV[b + 4]) end
    local key = KEYS[k0 + j]
    local threshold, window_ms, cost = tonumber(ARGV[b + 1]), tonumber(ARGV[b + 2]), tonumber(ARGV[b + 3])
    local p = { check(key, threshold, window_ms, cost, given) }
    local e = block_end(key, given)
    local was = e ~= nil
    local start = false
    if e then
      if record and ext and cost <= threshold and given + bms * 1024 > e then
        e = given + bms * 1024
        start = true
      end
    elseif record and p[1] > 0 and bms > 0 then
      e = given + bms * 1024
      start = true
    end
    if e then
      p.reply = { blocked(check, bstate, key, threshold, window_ms, cost, given, e, p[3]) }
    end
    if e or p[1] ~= 0 then all = false end
    p.id, p.key, p.given, p.e, p.start, p.was = id, key, given, e, start, was
    plans[j] = p
  end
  for j = 1, count do
    local p = plans[j]
    -- A blocked key is left as it is (no tidying): the block decided, not the algorithm.
    if record and not p.was then
      local _, commit, tidy = algorithm(p.id)
      if all then
        local n0
        p[2], p[3], n0 = commit(unpack(p, 2, 11))
        if tb then
          tickets[tb + 2 * j - 1] = p.given + p[4]
          tickets[tb + 2 * j] = n0
        end
      else
        tidy(unpack(p, 2, 11))
      end
    end
    if p.start then set_block(p.key, p.e, p.given) end
    local r = p.reply or p
    local o = (k0 + j - 1) * 4
    out[o + 1] = r[1]
    out[o + 2] = r[2]
    out[o + 3] = r[3]
    out[o + 4] = r[4]
  end
  if record and all then recorded = true end
end
-- A unit of one entry that is not a decision: 'p' penalty (cost: the points), 'u<t> <n0> <cost>
-- <rid>' refund (cost: the units), 'b' block (cost: its ms), 'x' delete.
local function operate(k0, a0, op)
  local check, _, _, bstate, penalty, refund = algorithm(string.sub(ARGV[a0], 1, 1))
  local given = server_ticks
  if own_time then given = tonumber(ARGV[a0 + 4]) end
  local key = KEYS[k0 + 1]
  local threshold, window_ms, cost = tonumber(ARGV[a0 + 1]), tonumber(ARGV[a0 + 2]), tonumber(ARGV[a0 + 3])
  local o = k0 * 4
  local c = string.sub(op, 1, 1)
  local r1, r2, r3, r4 = 0, 0, 0, 0
  if c == 'p' then
    -- Reads first (the check in penalty validates the state, the block is read), then writes.
    local e = block_end(key, given)
    penalty(key, threshold, window_ms, cost, given)
    recorded = true
    local s
    r1, r2, s, r4 = check(key, threshold, window_ms, 1, given)
    r3 = s
    if e then r1, r2, r3, r4 = blocked(check, bstate, key, threshold, window_ms, 1, given, e, s) end
  elseif c == 'u' then
    local t, n0, dc, id = string.match(op, '^u(%-?%d+) (%d+) (%d+) (%d+)$')
    if t == nil then error({ err = 'ERR ratewarden: not a refund: ' .. string.sub(op, 1, 60) }) end
    rid = id
    r1 = refund(key, threshold, window_ms, cost, tonumber(t), tonumber(n0), tonumber(dc), given)
    if r1 == 1 then recorded = true end
  elseif c == 'b' then
    set_block(key, given + cost * 1024, given)
  elseif c == 'x' then
    r1 = redis.call('DEL', key, key .. ':block')
    recorded = true
  else
    error({ err = 'ERR ratewarden: unknown operation ' .. string.sub(op, 1, 20) })
  end
  out[o + 1], out[o + 2], out[o + 3], out[o + 4] = r1, r2, r3, r4
end
local a = 5
local k = 0
local tn = 0
while k < n do
  local count = tonumber(ARGV[a])
  local op = ARGV[a + 1]
  local deadline = ARGV[a + 2]
  local status = nil
  local status_text = nil
  local tb = nil
  local c = string.sub(op, 1, 1)
  if c == 'v' then
    tb = tn
    tn = tn + 2 * count
    for j = tb + 1, tn do tickets[j] = 0 end
  end
  if deadline ~= '' and server_us > tonumber(deadline) then
    -- Past this unit's deadline: its caller has given up on it. Nothing written.
    status = -3
  else
    local ok, err
    rid = nil
    if c == '1' or c == '0' then ok, err = pcall(decide, k, a + 3, count, op, nil)
    elseif c == 'v' then
      rid = string.sub(op, 2)
      ok, err = pcall(decide, k, a + 3, count, '1', tb)
    else ok, err = pcall(operate, k, a + 3, op) end
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
for j = 1, tn do out[n * 4 + j] = tickets[j] end
if token and recorded then
  -- The reply, for a re-sent call: kept until the deadline has passed (a call re-sent later
  -- writes nothing anyway), plus a second; 60 s when the call has no deadline.
  local px = 60000
  if ARGV[4] ~= '' then px = math.ceil((tonumber(ARGV[4]) - server_us) / 1000) + 1000 end
  redis.call('SET', token, cmsgpack.pack(out), 'PX', px)
end
out[n * 4 + tn + 1] = server_us
return out
`;

/**
 * The algorithms' functions, defined only for the algorithms the call uses (a closure costs
 * Redis time at every call), then the dispatch from an id to them.
 */
const ALGORITHM_FUNCTIONS =
  ALGORITHMS.map((a) => `local uses_${a.id}, ${a.id}_check, ${a.id}_commit, ${a.id}_tidy, ${a.id}_bstate, ${a.id}_penalty, ${a.id}_refund = false\n`).join('') +
  `do
  local a = 5
  while a <= #ARGV do
    local count = tonumber(ARGV[a])
    for j = 0, count - 1 do
      local id = ARGV[a + 3 + j * stride]
      if #id > 1 then id = string.sub(id, 1, 1) end
${ALGORITHMS.map((a) => `      if id == '${a.id}' then uses_${a.id} = true end\n`).join('')}    end
    a = a + 3 + count * stride
  end
end
` +
  ALGORITHMS.map((a) => `if uses_${a.id} then\n${a.lua}end\n`).join('') +
  'local function algorithm(id)\n' +
  ALGORITHMS.map((a) => `  if id == '${a.id}' then return ${a.id}_check, ${a.id}_commit, ${a.id}_tidy, ${a.id}_bstate, ${a.id}_penalty, ${a.id}_refund end\n`).join('') +
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
 * 5. then per unit: its number of entries; its operation; its deadline in the server's
 *    microseconds, or empty (past it, the unit writes nothing and each of its entries' wait is
 *    `-3`); then per entry: the algorithm's id (followed, when the entry's quota blocks, by its
 *    block in milliseconds and `e` when refused attempts extend it: `l60000e`), the threshold,
 *    the window in whole milliseconds, the cost, and with `m` the entry's time in **ticks** (an
 *    integer: the limiter's reading on the grid of `src/time.ts`). The operations:
 *    - `1` to record (when every entry allows and no entry's key is blocked), `0` to only check
 *      (`peek`); `v<id>` to record as `1`, as reservation `<id>` (a decimal integer below 2^53):
 *      the log names its members `<time>-<n>:<id>`, GCRA keeps the id with its state (40
 *      bytes), and the reply carries a ticket per entry (below). A key is blocked while its
 *      block key, `<key>:block` (the same hash slot), holds an end (ticks) after the entry's time:
 *      the entry is then refused without touching the key; a refused entry of a recording unit
 *      whose quota blocks (a cost up to the threshold) starts a block (ending the block's ms
 *      after the entry's time), or with `e` restarts a running one (never shortening it);
 *    - one entry each: `p`, a penalty of `cost` points (the reply: a check of cost 1 after it);
 *      `u<time> <n0> <cost> <id>`, a refund of `cost` units of reservation `<id>` recorded at
 *      `<time>` (ticks), its members numbered from `<n0>`, `<cost>` in all (the reply's wait:
 *      `1` given back, `0` not); `b`, a block of `cost` ms, replacing any; `x`, a delete of the
 *      key and its block (the reply's wait: how many of the two keys existed).
 *
 * Returns a flat array, four integers per entry, then two per entry of each `v` unit (the
 * ticket: the time its units were recorded at, in ticks, and its first member's number, `0`
 * for GCRA; zeros when the unit did not record), then the server's time in microseconds:
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
 *   the key's state (the wait counts from there); for an entry refused by a block, `-1 −` the
 *   block's remaining ticks (the wait, the block's remaining time plus what the algorithm needs
 *   at its end, counts from the time given; `left` is 0; the state at least the block's).
 *
 * A unit recorded exactly when it records and every entry's wait is `0`.
 *
 * The arithmetic is the in-memory strategies', on the same grid, and exact: times are integers in
 * ticks and only their differences are used (Lua numbers are doubles; Redis formats the numbers
 * passed to `redis.call` exactly). Every write sets the key's expiry to when its state is clear,
 * so idle keys vanish without a sweep (`PEXPIRE … GT` needs Redis 7.0 or later).
 */
export const DECIDE_SCRIPT = HEAD + ALGORITHM_FUNCTIONS + TAIL;

/**
 * The SHA-1 of {@link DECIDE_SCRIPT} (of its UTF-8 bytes, in lowercase hex), as `EVALSHA` expects
 * it. A literal, so that `ratewarden/redis` needs no hash function at run time (no `node:crypto`:
 * it runs in Workers, Deno and Bun as in Node); test/unit/redis-script-sha.test.ts recomputes it
 * with `node:crypto` and fails, printing the new value, whenever the script changes. (A wrong
 * value would not make decisions wrong, only slower: every `EVALSHA` would meet `NOSCRIPT` and
 * send the script with `EVAL`.)
 */
export const DECIDE_SHA = '562956729114f9a2959afdd7441453f54fa0d267';
