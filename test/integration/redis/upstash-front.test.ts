// The test front of Upstash's REST protocol (test/support/upstash-front.ts) holds to the parts of
// the protocol it claims, by plain HTTP requests (fetch) and through the real @upstash/redis
// client, against a real redis-server; and its faults do what they say.
import { Redis } from '@upstash/redis';
import { Redis as Ioredis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { RedisServer } from '../../support/redis-server.js';
import { UpstashFront } from '../../support/upstash-front.js';

let server: RedisServer;
let front: UpstashFront;
beforeAll(async () => {
  server = await RedisServer.start();
  front = await UpstashFront.start(server.port);
});
afterAll(async () => {
  await front?.close();
  await server?.stop();
});

/** POSTs `body` (JSON) to `path`, with the token unless `token` says otherwise (`null`: none). */
async function post(path: string, body: unknown, headers: Record<string, string> = {}, token: string | null = front.token) {
  const res = await fetch(`${front.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token === null ? {} : { authorization: `Bearer ${token}` }), ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as unknown, headers: res.headers };
}

const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');

describe('the Upstash REST protocol, as the front speaks it', () => {
  it('POST / runs one command: {result}; integers as numbers, nil as null, strings as text', async () => {
    expect(await post('/', ['SET', 'front:a', 'héllo'])).toMatchObject({ status: 200, body: { result: 'OK' } });
    expect(await post('/', ['GET', 'front:a'])).toMatchObject({ status: 200, body: { result: 'héllo' } });
    expect(await post('/', ['INCRBY', 'front:n', 41])).toMatchObject({ status: 200, body: { result: 41 } });
    expect(await post('/', ['GET', 'front:none'])).toMatchObject({ status: 200, body: { result: null } });
  });

  it('Upstash-Encoding: base64 encodes every string of a result, in nested arrays too; numbers and null stay', async () => {
    const script = "return { 1, 'two', { -3, 'four' }, 'OK' }";
    const plain = await post('/', ['EVAL', script, 0]);
    expect(plain.body).toEqual({ result: [1, 'two', [-3, 'four'], 'OK'] });
    const encoded = await post('/', ['EVAL', script, 0], { 'upstash-encoding': 'base64' });
    expect(encoded.body).toEqual({ result: [1, b64('two'), [-3, b64('four')], b64('OK')] });
    expect((await post('/', ['GET', 'front:a'], { 'upstash-encoding': 'base64' })).body).toEqual({ result: b64('héllo') });
    expect((await post('/', ['GET', 'front:none'], { 'upstash-encoding': 'base64' })).body).toEqual({ result: null });
  });

  it('a Redis error is 400 {error}, never encoded', async () => {
    const r = await post('/', ['EVALSHA', '0'.repeat(40), 0], { 'upstash-encoding': 'base64' });
    expect(r).toMatchObject({ status: 400, body: { error: expect.stringMatching(/^NOSCRIPT /) as unknown } });
  });

  it('POST /pipeline: one {result} or {error} per command, in order', async () => {
    const r = await post('/pipeline', [['SET', 'front:p', 'x'], ['INCR', 'front:p'], ['GET', 'front:p']], { 'upstash-encoding': 'base64' });
    expect(r.status).toBe(200);
    expect(r.body).toEqual([{ result: b64('OK') }, { error: 'ERR value is not an integer or out of range' }, { result: b64('x') }]);
  });

  it('POST /multi-exec: in MULTI/EXEC; a command failing when run is its {error}; one Redis refuses to queue is 400', async () => {
    const r = await post('/multi-exec', [['SET', 'front:m', 'y'], ['INCR', 'front:m'], ['GET', 'front:m']]);
    expect(r).toEqual({ status: 200, body: [{ result: 'OK' }, { error: 'ERR value is not an integer or out of range' }, { result: 'y' }], headers: r.headers });
    const aborted = await post('/multi-exec', [['SET', 'front:m', 'z'], ['NOSUCHCOMMAND']]);
    expect(aborted).toMatchObject({ status: 400, body: { error: expect.stringMatching(/^EXECABORT /) as unknown } });
    expect((await post('/', ['GET', 'front:m'])).body).toEqual({ result: 'y' });
  });

  it('refuses a missing or wrong token (401), a malformed body (400), another path (404) or method (405)', async () => {
    expect((await post('/', ['PING'], {}, null)).status).toBe(401);
    expect((await post('/', ['PING'], {}, 'wrong')).status).toBe(401);
    expect(await post('/', '{not json')).toMatchObject({ status: 400, body: { error: expect.any(String) as unknown } });
    expect((await post('/', [])).status).toBe(400);
    expect((await post('/', [['nested']])).status).toBe(400);
    expect((await post('/pipeline', ['PING'])).status).toBe(400);
    expect((await post('/set/foo/bar', ['PING'])).status).toBe(404);
    const get = await fetch(`${front.url}/`, { headers: { authorization: `Bearer ${front.token}` } });
    expect(get.status).toBe(405);
    expect(await get.json()).toEqual({ error: expect.any(String) as unknown });
  });

  it('echoes upstash-sync-token', async () => {
    expect((await post('/', ['PING'], { 'upstash-sync-token': 'abc' })).headers.get('upstash-sync-token')).toBe('abc');
    expect((await post('/', ['PING'])).headers.get('upstash-sync-token')).toBeNull();
  });

  it('serves the real @upstash/redis client with its defaults (auto-pipelining, base64, deserialisation) and without', async () => {
    for (const config of [{}, { enableAutoPipelining: false, responseEncoding: false as const, automaticDeserialization: false }]) {
      const redis = new Redis({ url: front.url, token: front.token, ...config });
      await redis.set('front:json', '{"a":1}');
      const [value, missing, counted] = await Promise.all([redis.get('front:json'), redis.get('front:none'), redis.incr('front:counter')]);
      expect(value).toEqual('automaticDeserialization' in config ? '{"a":1}' : { a: 1 });
      expect(missing).toBeNull();
      expect(typeof counted).toBe('number');
      expect(await redis.multi().set('front:tx', 'v').get('front:tx').exec()).toEqual(['OK', 'v']);
    }
  });
});

describe('its faults', () => {
  const redis = (): Redis => new Redis({ url: front.url, token: front.token, enableAutoPipelining: false, retry: { retries: 0 } });
  let direct: Ioredis;
  beforeAll(() => {
    direct = new Ioredis({ port: server.port, host: '127.0.0.1' });
  });
  afterAll(() => {
    direct?.disconnect();
    vi.useRealTimers();
  });

  it('pause before running: the command runs only when resumed', async () => {
    front.pause('before-running');
    const set = redis().set('front:held', 'v');
    await front.whenHeld(1);
    expect(await direct.get('front:held')).toBeNull();
    front.resume();
    expect(await set).toBe('OK');
    expect(await direct.get('front:held')).toBe('v');
  });

  it('pause after running: the command has run while its reply is held', async () => {
    front.pause('after-running');
    const set = redis().set('front:ran', 'v');
    await front.whenHeld(1);
    expect(await direct.get('front:ran')).toBe('v');
    front.resume();
    expect(await set).toBe('OK');
  });

  it('down refuses connections (held requests dropped, never run); up serves again', async () => {
    front.pause('before-running');
    const held = redis().set('front:dropped', 'v');
    await front.whenHeld(1);
    await front.down();
    await expect(held).rejects.toThrow();
    await expect(redis().get('front:dropped')).rejects.toThrow(/fetch failed/);
    await front.up();
    expect(await redis().get('front:dropped')).toBeNull();
    expect(await direct.exists('front:dropped')).toBe(0);
  });

  it('a dropped reply: the command ran, the client sees a network error', async () => {
    const dropped = front.dropNextReply();
    await expect(redis().incr('front:lost')).rejects.toThrow(/fetch failed/);
    await dropped;
    expect(await direct.get('front:lost')).toBe('1');
  });

  it('slow: every answer once the delay has passed (a timer: fake timers drive it)', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    front.slow(30);
    try {
      let answered = false;
      const ping = redis().ping().then((pong) => {
        answered = true;
        return pong;
      });
      await front.whenDelaying(1);
      await vi.advanceTimersByTimeAsync(29);
      expect(answered).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      expect(await ping).toBe('PONG');
    } finally {
      front.slow(0);
      vi.useRealTimers();
    }
  });
});
