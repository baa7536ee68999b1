// The attacker, a process of its own (so that it takes no time from the server's event loop):
// `node attacker.mjs PORT ATTEMPTS MODE [FIRST]` sends ATTEMPTS wrong passwords for one username
// to POST http://127.0.0.1:PORT/login over raw TCP, one connection per attempt, and prints one
// JSON array of `{ status, retryAfter }` on stdout, in the attempts' order.
//   parallel: opens every connection first, waits until all are connected, then writes every
//             request in one synchronous loop: the whole burst is on the wire before the server
//             has answered any of it ("200 attempts sent at once").
//   sequential: one attempt at a time, each answered before the next is sent.
// FIRST numbers the passwords (wrong-FIRST, wrong-FIRST+1, ...). Bounded: every attempt times
// out after 60 s.
import { connect } from 'node:net';
import { once } from 'node:events';

const [port, attempts, mode, first = '0'] = process.argv.slice(2);
const USERNAME = 'victim@example.com';

function requestText(i) {
  const body = JSON.stringify({ email: USERNAME, password: `wrong-${i}` });
  return (
    'POST /login HTTP/1.1\r\n' +
    `Host: 127.0.0.1:${port}\r\n` +
    'Content-Type: application/json\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    'Connection: close\r\n' +
    '\r\n' +
    body
  );
}

async function open() {
  const socket = connect(Number(port), '127.0.0.1');
  socket.setNoDelay(true);
  await once(socket, 'connect');
  return socket;
}

/** The answer on `socket` (the server closes it after answering: Connection: close). */
function answer(socket) {
  return new Promise((resolve, reject) => {
    let raw = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk) => (raw += chunk));
    socket.setTimeout(60_000, () => socket.destroy(new Error('attempt timed out after 60 s')));
    socket.on('error', reject);
    socket.on('close', () => {
      const head = raw.split('\r\n\r\n', 1)[0].split('\r\n');
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head[0] ?? '')?.[1]);
      if (!Number.isInteger(status)) return reject(new Error(`no HTTP answer: ${JSON.stringify(raw.slice(0, 200))}`));
      const retryAfter = head.find((line) => /^retry-after:/i.test(line))?.replace(/^retry-after:\s*/i, '');
      resolve({ status, retryAfter });
    });
  });
}

const n = Number(attempts);
const start = Number(first);
let answers;
if (mode === 'parallel') {
  const sockets = await Promise.all(Array.from({ length: n }, open));
  const pending = sockets.map(answer);
  sockets.forEach((socket, i) => socket.write(requestText(start + i)));
  answers = await Promise.all(pending);
} else {
  answers = [];
  for (let i = 0; i < n; i++) {
    const socket = await open();
    const pending = answer(socket);
    socket.write(requestText(start + i));
    answers.push(await pending);
  }
}
process.stdout.write(JSON.stringify(answers));
