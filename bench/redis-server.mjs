// The benches' redis-server: Debian's binary on the PATH, started on a free loopback port without
// persistence, for bench/redis.mjs and bench/login-attack/run.mjs.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { accessSync, constants } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';

const READY_TIMEOUT_MS = 10_000;

/** The path of `name` on the PATH, or undefined. */
export function findExecutable(name) {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir === '') continue;
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** A free TCP port on 127.0.0.1: listen on port 0, read the port, close. */
export async function freePort() {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address();
  server.close();
  await once(server, 'close');
  return port;
}

/** Starts redis-server on a free loopback port; resolves once it accepts connections. */
export async function startRedisServer(binary) {
  const port = await freePort();
  const child = spawn(binary, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code)));
  let output = '';
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    }
  };
  try {
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`redis-server was not ready within ${READY_TIMEOUT_MS} ms:\n${output}`)), READY_TIMEOUT_MS);
      const onData = (chunk) => {
        output += chunk;
        if (output.includes('Ready to accept connections')) {
          clearTimeout(timer);
          child.stdout.off('data', onData);
          resolve();
        }
      };
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', onData);
      child.stderr.on('data', (chunk) => {
        output += chunk;
      });
      child.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      exited.then((status) => {
        clearTimeout(timer);
        reject(new Error(`redis-server exited (${status}) before it was ready:\n${output}`));
      });
    });
  } catch (error) {
    await stop();
    throw error;
  }
  // Keep draining its output so that it never blocks on a full pipe.
  child.stdout.resume();
  child.stderr.resume();
  return { port, child, stop };
}
