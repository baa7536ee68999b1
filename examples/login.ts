// Protecting a login form (examples/login/recipe.ts): 200 wrong passwords for one account sent
// at once reach the password check 5 times, then the pair is locked out for 15 minutes; another
// account from the same address still logs in, and its success is not counted as a failure.
// Here in memory; on Redis, give loginLimits() the stores (see the README, "Protecting a login").
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import express from 'express';
import { loginLimits, loginRoute } from './login/recipe.js';

let checks = 0;
/** Your password check; here a slow one (50 ms, as a real hash takes) knowing one account. */
async function checkPassword(username: string, password: string): Promise<boolean> {
  checks++;
  await sleep(50);
  return username === 'bob' && password === 'correct horse';
}

const limits = loginLimits();
const app = express();
loginRoute(app, limits, checkPassword);
const server = app.listen(0, '127.0.0.1');
await once(server, 'listening');
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/login`;
const login = (username: string, password: string): Promise<Response> =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username, password }) });

const statuses = new Map<number, number>();
for (const response of await Promise.all(Array.from({ length: 200 }, (_, i) => login('alice', `guess-${i}`)))) {
  statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
}
console.log(`200 wrong passwords for alice at once: ${checks} password checks; statuses ${JSON.stringify(Object.fromEntries(statuses))}`);
const locked = await login('alice', 'guess-200');
console.log(`alice again: ${locked.status}, locked out for ${Math.round(Number(locked.headers.get('Retry-After')) / 60)} more minutes`);
const bob = await login('bob', 'correct horse');
console.log(`bob from the same address: ${bob.status} ${await bob.text()}`);
console.log(`failures counted for this address today: ${100 - (await limits.perAddress.peek('127.0.0.1')).remaining}`);
server.close();
