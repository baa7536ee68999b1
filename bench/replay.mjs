// Replay at speed: `npm run bench:replay`.
// 1. The shared log repeated 100 times (1,000,000 lines, uncompressed; each copy's timestamps
//    shifted by 4 days × its index, so the copies follow each other), written to a temp file and
//    replayed by the built CLI three times: lines per second (the CLI's own figure, reading and
//    parsing included) and the peak resident set.
// 2. The log repeated 1,000 times (10,000,000 lines) streamed into the CLI's stdin: the peak
//    resident set, against the 1.5 GB target.
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

const lines = gunzipSync(readFileSync(join(root, 'data', 'access-combined.log.gz'))).toString('utf8').split('\n').filter(Boolean);
// Split each line around its timestamp once: prefix, time (ms), zone, suffix.
const parts = lines.map((line) => {
  const open = line.indexOf('[');
  const close = line.indexOf(']', open);
  const [date, zone] = line.slice(open + 1, close).split(' ');
  const [d, mon, rest] = date.split('/');
  const [y, hh, mm, ss] = rest.split(':');
  const time = Date.UTC(Number(y), MONTHS.indexOf(mon), Number(d), Number(hh), Number(mm), Number(ss));
  return { head: line.slice(0, open + 1), time, tail: ` ${zone}${line.slice(close)}\n` };
});
const pad = (n) => String(n).padStart(2, '0');
function stamp(ms) {
  const t = new Date(ms);
  return `${pad(t.getUTCDate())}/${MONTHS[t.getUTCMonth()]}/${t.getUTCFullYear()}:${pad(t.getUTCHours())}:${pad(t.getUTCMinutes())}:${pad(t.getUTCSeconds())}`;
}
/** Copy `k` of the log as one string (the zone is kept; only the wall time moves). */
function copy(k) {
  let out = '';
  for (const p of parts) out += p.head + stamp(p.time + k * SHIFT_MS) + p.tail;
  return out;
}

/** Writes copies 0 … n-1 to `stream`, respecting back-pressure. */
async function writeCopies(stream, n) {
  for (let k = 0; k < n; k++) {
    if (!stream.write(copy(k))) await new Promise((resolve) => stream.once('drain', resolve));
  }
  await new Promise((resolve) => stream.end(resolve));
}

/** Runs the CLI; resolves to its JSON summary and peak RSS (bytes). */
function runCli(args, feed) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', RSS, CLI, 'replay', ...args, '--json'], {
      stdio: [feed ? 'pipe' : 'ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (err += c));
    if (feed) feed(child.stdin).catch(reject);
    child.on('close', (code) => {
      const rss = /maxRSS=(\d+)/.exec(err);
      if (code !== 0 || !rss) return reject(new Error(`replay failed (${code}): ${err}`));
      resolve({ summary: JSON.parse(out), maxRss: Number(rss[1]) * 1024 });
    });
  });
}

console.log(`${os.cpus()[0]?.model ?? 'cpu'}, ${os.cpus().length} cores, node ${process.version}`);
const dir = mkdtempSync(join(os.tmpdir(), 'ratewarden-bench-'));
try {
  const file = join(dir, 'access-1m.log');
  await writeCopies(createWriteStream(file), 100);
  const runs = [];
  for (let i = 0; i < 3; i++) runs.push(await runCli([file]));
  const rates = runs.map((r) => r.summary.lines_per_second).sort((a, b) => a - b);
  const mb = (b) => `${(b / 2 ** 20).toFixed(0)} MiB`;
  console.log(
    `1,000,000 lines (file, uncompressed): ${runs[0].summary.requests.toLocaleString('en-US')} requests, ` +
      `${runs[0].summary.rejected.toLocaleString('en-US')} rejected; lines/s over 3 runs: ` +
      `${rates.map((r) => Math.round(r).toLocaleString('en-US')).join(', ')} (median ${Math.round(rates[1]).toLocaleString('en-US')}); ` +
      `peak RSS ${mb(Math.max(...runs.map((r) => r.maxRss)))}`,
  );
  const big = await runCli(['-'], (stdin) => writeCopies(stdin, 1_000));
  console.log(
    `10,000,000 lines (stdin): ${big.summary.requests.toLocaleString('en-US')} requests in ` +
      `${big.summary.seconds.toFixed(1)} s (${Math.round(big.summary.lines_per_second).toLocaleString('en-US')} lines/s, ` +
      `the generator sharing the 2 cores); peak RSS ${mb(big.maxRss)} (target: 1.5 GB)`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
