// A delaying TCP proxy in its own process (so its timers never compete with the test's):
// node attack-issue21-proxy.mjs <targetPort> <maxUpMs> <maxDownMs> <split> <seed>
// Prints its port on stdout. Bytes of each direction are delayed by a random 0..max ms, in order.
import { connect, createServer } from 'node:net';
const [target, maxUp, maxDown, split, seed] = process.argv.slice(2).map(Number);
let a = seed >>> 0;
const rand = () => {
  a = (a + 0x6d2b79f5) >>> 0;
  let t = a;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const pipe = (from, to, max) => {
  // One FIFO per direction, drained by one timer at a time: bytes never overtake each other.
  const queue = [];
  let timer;
  const drain = () => {
    timer = undefined;
    const now = performance.now();
    while (queue.length > 0 && queue[0].at <= now + 0.5) {
      const { part } = queue.shift();
      if (!to.destroyed) to.write(part);
    }
    if (queue.length > 0) timer = setTimeout(drain, Math.max(1, Math.ceil(queue[0].at - now)));
  };
  let releaseAt = 0;
  from.on('data', (chunk) => {
    const parts = [];
    if (split > 0) for (let i = 0; i < chunk.length; i += split) parts.push(chunk.subarray(i, i + split));
    else parts.push(chunk);
    for (const part of parts) {
      const at = Math.max(releaseAt, performance.now() + rand() * max);
      releaseAt = at;
      queue.push({ at, part });
    }
    if (max === 0 && split === 0) drain();
    else if (timer === undefined) timer = setTimeout(drain, Math.max(0, Math.ceil(queue[0].at - performance.now())));
  });
};
const server = createServer((client) => {
  const upstream = connect({ port: target, host: '127.0.0.1' });
  for (const s of [client, upstream]) s.on('error', () => {});
  client.setNoDelay(true);
  upstream.setNoDelay(true);
  pipe(client, upstream, maxUp);
  pipe(upstream, client, maxDown);
  client.on('close', () => upstream.destroy());
  upstream.on('close', () => client.destroy());
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${server.address().port}\n`);
});
process.on('SIGTERM', () => process.exit(0));
