// Replay and suggest at speed: `npm run bench:replay`.
// 1. The shared log repeated 100 times (1,000,000 lines; each copy's timestamps shifted by
//    4 days × its index, so the copies follow each other), written twice to temp files: as
//    Combined Log Format, and as nginx-style JSON lines (`escape=json`: time_iso8601, msec,
//    remote_addr, request, status, …, the same requests; about 400 bytes a line).
// 2. For each format, `ratewarden replay` with 1, 2, 3 and 5 policies (`--limit`; from 2 on, the
//    group pass too), and `ratewarden suggest` (one window; the sliding-window log, which skips
//    the clients whose busiest window is within a threshold, and the token bucket, which cannot),
//    each run three times
//    by the built CLI: lines per second (the CLI's own figure, reading and parsing included; the
//    median of 3) and the peak resident set.
// 3. The log repeated 1,000 times (10,000,000 lines) streamed into the CLI's stdin, as CLF with
//    3 policies and as JSON lines with one: the peak resident set, against the 1.5 GB target.
import { spawn } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';

const root = fileURLToPath(new URL('..', import.meta.url));
const CLI = join(root, 'dist', 'cli.js');
const RSS = join(root, 'bench', 'report-rss.mjs');
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const SHIFT_MS = 4 * 86_400_000; // the sample spans about 83 hours

// The referer and user agent are optional (one line of the sample has an unterminated agent).
const LINE = /^(\S+) \S+ (\S+) \[(\d\d)\/(\w{3})\/(\d{4}):(\d\d):(\d\d):(\d\d) ([+-]\d{4})\] "((?:[^"\\]|\\.)*)" (\d{3}) (\S+)(?: "((?:[^"\\]|\\.)*)" "((?:[^"\\]|\\.)*)")?/;
const lines = gunzipSync(readFileSync(join(root, 'data', 'access-combined.log.gz'))).toString('utf8').split('\n').filter(Boolean);
// Each line once: its parts around the timestamp (CLF), and its fields (JSON).
const parts = lines.map((line) => {
  const m = LINE.exec(line);
  if (m === null) throw new Error(`not a combined log line: ${line}`);
  const [, client, , d, mon, y, hh, mm, ss, zone, request, status, bytes, referer, agent] = m;
  const time = Date.UTC(Number(y), MONTHS.indexOf(mon), Number(d), Number(hh), Number(mm), Number(ss));
  const open = line.indexOf('[');
  const close = line.indexOf(']', open);
  return {
    head: line.slice(0, open + 1),
    tail: ` ${zone}${line.slice(close)}\n`,
    time,
    json: { client, request, status: Number(status), bytes: bytes === '-' ? 0 : Number(bytes), referer: referer ?? '', agent: agent ?? '' },
  };
});
const pad = (n) => String(n).padStart(2, '0');
function stamp(ms) {
  const t = new Date(ms);
  return `${pad(t.getUTCDate())}/${MONTHS[t.getUTCMonth()]}/${t.getUTCFullYear()}:${pad(t.getUTCHours())}:${pad(t.getUTCMinutes())}:${pad(t.getUTCSeconds())}`;
}
/** Copy `k` of the log as CLF (the zone is kept; only the wall time moves). */
function clfCopy(k) {
  let out = '';
  for (const p of parts) out += p.head + stamp(p.time + k * SHIFT_MS) + p.tail;
  return out;
}
/** Copy `k` of the log as nginx-style JSON lines. */
function jsonCopy(k) {
  let out = '';
  for (const p of parts) {
    const t = p.time + k * SHIFT_MS;
    const j = p.json;
    out += `${JSON.stringify({
      time_iso8601: new Date(t).toISOString().replace('.000Z', '+00:00'),
      msec: (t / 1000).toFixed(3),
      remote_addr: j.client,
      remote_user: '',
      request: j.request,
      status: j.status,
      body_bytes_sent: j.bytes,
      request_time: 0.012,
      http_referer: j.referer,
      http_user_agent: j.agent,
    })}\n`;
  }
  return out;
}

/** Writes copies 0 … n-1 to `stream`, respecting back-pressure. */
async function writeCopies(stream, n, copy) {
  for (let k = 0; k < n; k++) {
    if (!stream.write(copy(k))) await new Promise((resolve) => stream.once('drain', resolve));
  }
  await new Promise((resolve) => stream.end(resolve));
}

/** Runs the CLI; resolves to its JSON summary and peak RSS (bytes). */
function runCli(args, feed) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', RSS, CLI, ...args, '--json'], {
      stdio: [feed ? 'pipe' : 'ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (err += c));
    if (feed) feed(child.stdin).catch(reject);
    child.on('close', (code) => {
      const rss = /maxRSS=(\d+)/.exec(err);
      if (code !== 0 || !rss) return reject(new Error(`${args[0]} failed (${code}): ${err}`));
      resolve({ summary: JSON.parse(out), maxRss: Number(rss[1]) * 1024 });
    });
  });
}

const POLICIES = ['60/1m', '1000/1h', '10/1s', '30/1m:gcra', '100/5m:token-bucket'];
const group = (n) => (n > 1 ? ' + group' : '');
const int = (n) => Math.round(n).toLocaleString('en-US');
const mb = (b) => `${(b / 2 ** 20).toFixed(0)} MiB`;

/** Three runs of `args`: the median lines/s, and the largest peak RSS. */
async function threeRuns(args) {
  const runs = [];
  for (let i = 0; i < 3; i++) runs.push(await runCli(args));
  const rates = runs.map((r) => r.summary.lines_per_second).sort((a, b) => a - b);
  return { rates, median: rates[1], maxRss: Math.max(...runs.map((r) => r.maxRss)), summary: runs[0].summary };
}

console.log(`${os.cpus()[0]?.model ?? 'cpu'}, ${os.cpus().length} cores, node ${process.version}, load average ${os.loadavg()[0].toFixed(2)}`);
const dir = mkdtempSync(join(os.tmpdir(), 'ratewarden-bench-'));
try {
  const files = { CLF: join(dir, 'access-1m.log'), 'JSON lines': join(dir, 'access-1m.jsonl') };
  await writeCopies(createWriteStream(files.CLF), 100, clfCopy);
  await writeCopies(createWriteStream(files['JSON lines']), 100, jsonCopy);
  console.log('\n1,000,000 lines from a file, lines/s (median of 3 runs; the three runs in brackets), peak RSS:\n');
  console.log('| format | command | policies | lines/s | runs | peak RSS |');
  console.log('| --- | --- | ---: | ---: | --- | ---: |');
  for (const [format, file] of Object.entries(files)) {
    for (const n of [1, 2, 3, 5]) {
      const limits = POLICIES.slice(0, n).flatMap((l) => ['--limit', l]);
      const r = await threeRuns(['replay', file, ...limits]);
      if (r.summary.requests !== 1_000_000) throw new Error(`${format}: ${r.summary.requests} requests`);
      console.log(`| ${format} | replay | ${n}${group(n)} | ${int(r.median)} | ${r.rates.map(int).join(', ')} | ${mb(r.maxRss)} |`);
    }
    for (const strategy of ['sliding-window-log', 'token-bucket']) {
      const s = await threeRuns(['suggest', file, '--window', '1m', '--strategy', strategy]);
      const answer = s.summary.answers[0];
      console.log(
        `| ${format} | suggest (1m ${strategy}: ${answer.threshold}, ${answer.passes} passes) | 1 | ${int(s.median)} | ${s.rates.map(int).join(', ')} | ${mb(s.maxRss)} |`,
      );
    }
  }
  console.log('\n10,000,000 lines streamed on stdin (the generator shares the 2 cores):\n');
  for (const [format, copy, n] of [['CLF', clfCopy, 3], ['JSON lines', jsonCopy, 1]]) {
    const limits = POLICIES.slice(0, n).flatMap((l) => ['--limit', l]);
    const big = await runCli(['replay', '-', ...limits], (stdin) => writeCopies(stdin, 1_000, copy));
    console.log(
      `- ${format}, ${n} ${n === 1 ? 'policy' : 'policies'}${group(n)}: ${big.summary.requests.toLocaleString('en-US')} requests in ` +
        `${big.summary.seconds.toFixed(1)} s (${int(big.summary.lines_per_second)} lines/s); peak RSS ${mb(big.maxRss)} (target: 1.5 GB)`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
