// The shared rejection path of the middleware (sendRejection), through a fake response: no
// framework and no server. The frameworks' own adapters are tested against real servers in
// test/integration/middleware/.
import { describe, expect, it } from 'vitest';
import { rateLimitProblem, type RateLimitResult } from '../../../src/index.js';
import { sendRejection, type RejectionResponse } from '../../../src/middleware/rejection.js';

const rejected: RateLimitResult = { allowed: false, remaining: 0, retryAfter: 30, limit: 2, resetAfter: 30 };

/**
 * A response that records what the rejection path does to it, with Express's notion of "the
 * user responded": `onRejected` returned the response itself, or sent it.
 */
class FakeResponse implements RejectionResponse<FakeResponse> {
  statusCode = 200;
  readonly headers = new Map<string, string>();
  /** The body of each send, in order (`undefined`: an empty body). */
  readonly sends: (string | undefined)[] = [];

  status(code: number): void {
    this.statusCode = code;
  }
  hasHeader(name: string): boolean {
    return this.headers.has(name.toLowerCase());
  }
  setHeader(name: string, value: string): void {
    this.headers.set(name.toLowerCase(), value);
  }
  responded(returned: unknown): this | undefined {
    return returned === this || this.sends.length > 0 ? this : undefined;
  }
  send(body: string | undefined): this {
    this.sends.push(body);
    return this;
  }
}

/** Rejects through a fresh fake response with `onRejected`, and returns it with what sendRejection resolved to. */
async function reject(onRejected?: (res: FakeResponse) => unknown, res = new FakeResponse()) {
  const out = await sendRejection(res, rejected, onRejected === undefined ? undefined : () => onRejected(res));
  return { res, out };
}

describe('sendRejection', () => {
  it('sends the default RFC 9457 problem as application/problem+json, with status 429', async () => {
    const { res, out } = await reject();
    expect(out).toBe(res);
    expect(res.statusCode).toBe(429);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(res.sends).toEqual([JSON.stringify(rateLimitProblem(rejected))]);
    expect(JSON.parse(res.sends[0] as string)).toEqual({
      type: 'about:blank',
      title: 'Too Many Requests',
      status: 429,
      detail: 'Rate limit of 2 exceeded; retry in 30 s.',
      retryAfter: 30,
    });
  });

  it('calls onRejected once, with the status already 429 and no Content-Type yet', async () => {
    const seen: [number, boolean][] = [];
    await reject((res) => {
      seen.push([res.statusCode, res.hasHeader('Content-Type')]);
      return 'x';
    });
    expect(seen).toEqual([[429, false]]);
  });

  it('sends a string as text/plain; charset=utf-8', async () => {
    const { res } = await reject(() => 'slow down');
    expect(res.statusCode).toBe(429);
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(res.sends).toEqual(['slow down']);
  });

  it('sends any other value as JSON (application/json), falsy ones included; awaits a promise', async () => {
    for (const [value, body] of [
      [{ error: 'slow down', wait: 30 }, '{"error":"slow down","wait":30}'],
      [[1, 2], '[1,2]'],
      [0, '0'],
      [false, 'false'],
    ] as const) {
      const { res } = await reject(async () => value);
      expect(res.statusCode).toBe(429);
      expect(res.headers.get('content-type')).toBe('application/json');
      expect(res.sends).toEqual([body]);
    }
  });

  it('sends an empty 429, without Content-Type, for null or undefined', async () => {
    for (const value of [null, undefined]) {
      const { res, out } = await reject(() => value);
      expect(out).toBe(res);
      expect(res.statusCode).toBe(429);
      expect(res.hasHeader('Content-Type')).toBe(false);
      expect(res.sends).toEqual([undefined]);
    }
  });

  it('keeps a Content-Type set by onRejected, or before the rejection', async () => {
    const { res } = await reject((r) => {
      r.setHeader('Content-Type', 'text/html; charset=utf-8');
      return '<p>slow down</p>';
    });
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.sends).toEqual(['<p>slow down</p>']);

    const json = await reject((r) => {
      r.setHeader('content-type', 'application/vnd.api+json');
      return { errors: [] };
    });
    expect(json.res.headers.get('content-type')).toBe('application/vnd.api+json');
    expect(json.res.sends).toEqual(['{"errors":[]}']);

    const preset = new FakeResponse();
    preset.setHeader('Content-Type', 'application/json');
    const { res: byDefault } = await reject(undefined, preset);
    expect(byDefault.headers.get('content-type')).toBe('application/json');
    expect(byDefault.sends).toEqual([JSON.stringify(rateLimitProblem(rejected))]);
  });

  it('sends nothing more when the user responded themself: returned the response, or sent it', async () => {
    const returnedItself = await reject((res) => {
      res.status(503);
      return res;
    });
    expect(returnedItself.out).toBe(returnedItself.res);
    expect(returnedItself.res.statusCode).toBe(503);
    expect(returnedItself.res.sends).toEqual([]);
    expect(returnedItself.res.hasHeader('Content-Type')).toBe(false);

    const sentIt = await reject((res) => {
      res.setHeader('Content-Type', 'text/plain');
      res.send('busy');
      return 'ignored';
    });
    expect(sentIt.out).toBe(sentIt.res);
    expect(sentIt.res.sends).toEqual(['busy']);
    expect(sentIt.res.headers.get('content-type')).toBe('text/plain');
  });

  it('ends with what `responded` gives for a returned value (as Fetch does with a returned Response)', async () => {
    const own = { own: true };
    const res = new FakeResponse();
    res.responded = (returned) => (returned === own ? res : undefined);
    const { out } = await reject(() => own, res);
    expect(out).toBe(res);
    expect(res.sends).toEqual([]);
  });

  it('rejects with what onRejected throws or rejects with, sending nothing', async () => {
    const thrown = new Error('hook broke');
    const res = new FakeResponse();
    const throwing = (): never => {
      throw thrown;
    };
    await expect(reject(throwing, res)).rejects.toBe(thrown);
    expect(res.sends).toEqual([]);
    await expect(reject(() => Promise.reject(thrown), res)).rejects.toBe(thrown);
    expect(res.sends).toEqual([]);
  });

  it('rejects, sending nothing, when the returned value cannot be encoded as JSON', async () => {
    const res = new FakeResponse();
    await expect(reject(() => ({ big: 1n }), res)).rejects.toThrow(TypeError);
    expect(res.sends).toEqual([]);
  });
  describe('a refusal by a store failure (degraded: fail-closed): 503, not 429', () => {
    const storeDown: RateLimitResult = { allowed: false, remaining: 0, retryAfter: 1, limit: 5, resetAfter: 1, degraded: 'fail-closed' };

    it('sends the "Rate limit store unavailable" problem with status 503', async () => {
      const res = new FakeResponse();
      const out = await sendRejection(res, storeDown, undefined);
      expect(out).toBe(res);
      expect(res.statusCode).toBe(503);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      expect(JSON.parse(res.sends[0] as string)).toEqual({
        type: 'about:blank',
        title: 'Rate limit store unavailable',
        status: 503,
        detail: "This request was refused because the rate limit's store could not be reached, not because the client exceeded the limit; retry in 1 s.",
        retryAfter: 1,
      });
    });

    it('gives onRejected the status 503 already set, and the result whose degraded tells', async () => {
      const seen: [number, string | undefined][] = [];
      const res = new FakeResponse();
      await sendRejection(res, storeDown, () => {
        seen.push([res.statusCode, storeDown.degraded]);
        return 'store down';
      });
      expect(seen).toEqual([[503, 'fail-closed']]);
      expect(res.statusCode).toBe(503);
      expect(res.sends).toEqual(['store down']);
    });

    it('keeps 429 for the other degraded results and for a cost over the limit', async () => {
      const { degraded: _, ...notDegraded } = storeDown;
      for (const result of [{ ...storeDown, degraded: 'local' as const }, { ...storeDown, retryAfter: Infinity }, notDegraded] satisfies RateLimitResult[]) {
        const res = new FakeResponse();
        await sendRejection(res, result, undefined);
        expect(res.statusCode).toBe(429);
        expect((JSON.parse(res.sends[0] as string) as { status: number }).status).toBe(429);
      }
    });
  });
});
