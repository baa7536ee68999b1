// The cost of observability on the hot path: `npm run bench:observe`.
//
// allowRequestSync (a string key, cost 1, no tiers: the common path) under tinybench, in three
// configurations:
//   - before:   the limiter without observability, built from the source at git ref
//               BASELINE_REF (the last commit before stats() and on(); --baseline=REF to choose
//               another, --baseline=none to skip);
//   - counters: the built package (dist/) with no listener: the stats() counters only (always on);
//   - listener: the built package with one 'decision' listener (it counts the rejections it sees).
// Workload: 100 keys round-robin, 5 requests per 1 s window, an injected clock advanced 1 ms per
// decision: each key is asked 10 times a second, so half the decisions reject (both branches of
// the counters run). One tinybench iteration is a batch of 1,000 decisions; a figure is the
// median (p50) batch latency divided by the batch size.
//
// The three run in one process, each from a module file of its own (the listener's from a copy
// of dist/), so that each has its own JIT feedback: the 'counters' call sites never see a
// listener, as in an application that does not listen. They run side by side, in a rotated
// order, --rounds=N times (default 15, --time=MS per configuration and round, default 150 ms):
// a slower or faster spell of a busy machine hits the three alike. Reported: the median ns per
// decision over the rounds (min-max in brackets), and each ratio as the median of the ratios
// within one round. Each configuration is first checked to make the expected decisions.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Bench } from 'tinybench';

/** The last commit before observability (stats(), on()) was added. */
const BASELINE_REF = '12bc35a';
const BATCH = 1_000;
const KEYS = Array.from({ length: 100 }, (_, i) => `client-${i}`);
const THRESHOLD = 5;
const WINDOW_SECONDS = 1;
/** The order of the configurations in the report. */
const ORDER = ['before', 'counters', 'listener'];

const args = Object.fromEntries(
  process.argv.slice(2).map((arg) => {
    const [name, value = 'true'] = arg.replace(/^--/, '').split('=');
    return [name, value];
  }),
);

await main();

/** A limiter of `RateLimiter` in `config`, its batch of decisions, checked. */
function contender(RateLimiter, config) {
  // The decision loop is compiled apart for each configuration (new Function, a source of its
  // own), so that its call site sees one limiter class only.
  const make = new Function(
    'RateLimiter',
    'KEYS',
    'BATCH',
    'THRESHOLD',
    'WINDOW_SECONDS',
    `// ${config}
    let now = 0;
    const limiter = new RateLimiter({ threshold: THRESHOLD, windowSeconds: WINDOW_SECONDS, clock: () => now });
    let k = 0;
    const batch = () => {
      let allowed = 0;
      for (let i = 0; i < BATCH; i++) {
        now++;
        if (limiter.allowRequestSync(KEYS[k]).allowed) allowed++;
        k = k === KEYS.length - 1 ? 0 : k + 1;
      }
      return allowed;
    };
    return { limiter, batch };`,
  );
  const { limiter, batch } = make(RateLimiter, KEYS, BATCH, THRESHOLD, WINDOW_SECONDS);
  let seen = 0;
  if (config === 'listener') {
    limiter.on('decision', (_key, result) => {
      if (!result.allowed) seen++;
    });
  }
  // A steady state allows THRESHOLD of the 10 requests per key and second; the listener sees
  // every rejection, the counters every decision.
  let total = 0;
  for (let i = 0; i < 10; i++) total += batch();
  const allowed = batch();
  total += allowed;
  if (allowed !== BATCH / 2) throw new Error(`${config}: expected ${BATCH / 2} allowed per batch, got ${allowed}`);
  if (config === 'listener' && seen !== 11 * BATCH - total) throw new Error(`${config}: the listener saw ${seen} rejections`);
  if (config !== 'before') {
    const stats = limiter.stats();
    if (stats.allowed !== total || stats.rejected !== 11 * BATCH - total) {
      throw new Error(`${config}: stats ${JSON.stringify(stats)}`);
    }
  } else if (typeof limiter.stats === 'function') {
    throw new Error(`before: ref has stats() already: choose an earlier --baseline`);
  }
  return batch;
}

async function main() {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const rounds = Number(args.rounds ?? 15);
  const timeMs = Number(args.time ?? 150);
  const ref = args.baseline ?? BASELINE_REF;
  console.log(`${os.cpus()[0]?.model ?? 'cpu'}, ${os.cpus().length} cores, node ${process.version}`);
  const dist = join(root, 'dist');
  const tmp = mkdtempSync(join(os.tmpdir(), 'ratewarden-observe-'));
  // The listener's limiter from a copy of dist/: the same code, its own JIT feedback.
  cpSync(dist, join(tmp, 'listener'), { recursive: true });
  const modules = { counters: join(dist, 'index.js'), listener: join(tmp, 'listener', 'index.js') };
  if (ref !== 'none') {
    try {
      const archive = execFileSync('git', ['archive', '--format=tar', ref, 'src'], { cwd: root, maxBuffer: 1 << 28 });
      execFileSync('tar', ['-x', '-C', tmp], { input: archive });
      const { build } = await import('tsup');
      await build({
        config: false,
        entry: { index: join(tmp, 'src', 'index.ts') },
        outDir: join(tmp, 'before'),
        format: ['esm'],
        dts: false,
        silent: true,
        sourcemap: false,
        splitting: false,
        target: 'es2022',
        platform: 'neutral',
      });
      modules.before = join(tmp, 'before', 'index.js');
    } catch (error) {
      console.log(`(no "before" baseline: could not build git ref ${ref}: ${String(error.message).split('\n')[0]})`);
    }
  }
  const configs = Object.keys(modules).sort((a, b) => ORDER.indexOf(a) - ORDER.indexOf(b));
  const batches = {};
  for (const config of configs) {
    const { RateLimiter } = await import(pathToFileURL(modules[config]).href);
    batches[config] = contender(RateLimiter, config);
  }
  const samples = Object.fromEntries(configs.map((c) => [c, []]));
  let sink = 0;
  for (let round = 0; round < rounds; round++) {
    const bench = new Bench({ time: timeMs, warmup: true, warmupTime: round === 0 ? 300 : 50, throws: true });
    for (let i = 0; i < configs.length; i++) {
      const config = configs[(i + round) % configs.length];
      const batch = batches[config];
      bench.add(config, () => {
        sink += batch();
      });
    }
    await bench.run();
    for (const task of bench.tasks) {
      if (task.result?.state !== 'completed') throw new Error(`${task.name}: ${task.result?.state}`);
      samples[task.name].push((task.result.latency.p50 * 1e6) / BATCH);
    }
  }
  rmSync(tmp, { recursive: true, force: true });
  if (sink === 0) throw new Error('no decision allowed');

  const median = (values) => {
    const sorted = [...values].sort((a, b) => a - b);
    const mid = sorted.length >> 1;
    return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  };
  const label = {
    before: `before (ref ${ref}: no counters, no listener)`,
    counters: 'counters only (no listener)',
    listener: 'counters + one decision listener',
  };
  console.log(`allowRequestSync, ${KEYS.length} keys, half rejected, ${rounds} rounds of ${timeMs} ms per configuration`);
  for (const config of configs) {
    const values = samples[config];
    console.log(
      `  ${label[config].padEnd(48)} ${median(values).toFixed(1).padStart(6)} ns/decision` +
        `  [${Math.min(...values).toFixed(1)}-${Math.max(...values).toFixed(1)}]`,
    );
  }
  const ratio = (a, b) => median(samples[a].map((value, i) => value / samples[b][i]));
  if (samples.before !== undefined) {
    console.log(`  counters only / before:      ${ratio('counters', 'before').toFixed(3)}`);
  }
  console.log(`  with a listener / counters:  ${ratio('listener', 'counters').toFixed(3)}`);
  if (samples.before !== undefined) {
    console.log(`  with a listener / before:    ${ratio('listener', 'before').toFixed(3)}`);
  }
}
