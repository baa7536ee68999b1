// The login recipe: brute-force protection of a login route, as tested code (examples/login.ts
// runs it in memory; test/integration/login-recipe.test.ts runs it on Redis in two processes).
//
// Two limits, decided as one RateLimitGroup, so that neither is charged when the other refuses:
// - 5 failed attempts per (username, client address) per 15 minutes; the attempt after them is
//   refused and locks that pair out for 15 minutes (blockSeconds);
// - 100 failed attempts per client address per day; then that address is locked out for a day.
// A success is not a failure: it gives the day's unit back and clears the pair's failures.
//
// The attempt is decided BEFORE the password is checked (reserve), and given back after a
// success (refund): so 200 wrong passwords sent at once reach the password check 5 times, not
// 200 (a recipe that checks first and records only after a failure lets every attempt that
// arrives during the first check through).
import type { Express, Request, Response } from 'express';
import express from 'express';
import { ipKey, RateLimitGroup, RateLimiter, rateLimitHeaders, type RateLimitStore, type User } from 'ratewarden';

export interface LoginLimits {
  /** Failed attempts per (username, client address). */
  readonly consecutive: RateLimiter;
  /** Failed attempts per client address per day. */
  readonly perAddress: RateLimiter;
  /** Both, all or nothing. The user is `{ id: address, name: username }`. */
  readonly group: RateLimitGroup;
}

/** The key of the (username, client address) limit. */
export function pairKey(user: User | string): string {
  return typeof user === 'string' ? user : `${user.name ?? ''}|${user.id}`;
}

/**
 * Builds the two limits: in memory by default, or on the stores `storeOf` returns (one per limit,
 * e.g. Redis strategies on one client, so that the group decides both in one script).
 */
export function loginLimits(storeOf?: (limit: 'consecutive' | 'per-address') => RateLimitStore): LoginLimits {
  const consecutive = new RateLimiter({
    name: 'login-consecutive',
    threshold: 5,
    windowSeconds: 15 * 60,
    blockSeconds: 15 * 60,
    ...(storeOf === undefined ? {} : { strategy: storeOf('consecutive') }),
  });
  const perAddress = new RateLimiter({
    name: 'login-per-address',
    threshold: 100,
    windowSeconds: 24 * 3600,
    blockSeconds: 24 * 3600,
    ...(storeOf === undefined ? {} : { strategy: storeOf('per-address') }),
  });
  const group = new RateLimitGroup([
    { limiter: consecutive, name: 'consecutive', key: pairKey },
    { limiter: perAddress, name: 'per-address', key: (user) => (typeof user === 'string' ? user : user.id) },
  ]);
  return { consecutive, perAddress, group };
}

/**
 * Adds `POST /login` to `app`, protected by `limits`; `checkPassword` is your own check. Express 5
 * (which passes a rejected async handler's error to its error handler; on Express 4, wrap the
 * handler in a try/catch calling `next(error)`). `req.ip` is the address that connected: behind a
 * reverse proxy, set `app.set('trust proxy', ...)` to your proxies, or every client shares the
 * proxy's address, and its daily limit.
 */
export function loginRoute(app: Express, limits: LoginLimits, checkPassword: (username: string, password: string) => Promise<boolean>): void {
  app.post('/login', express.json(), async (req: Request, res: Response) => {
    const body = (req.body ?? {}) as { username?: unknown; password?: unknown };
    const { password } = body;
    // One account, one key: usernames compared as your accounts are (here case-insensitively),
    // and bounded, since each one becomes a key in memory or in Redis.
    const username = typeof body.username === 'string' ? body.username.trim().toLowerCase() : '';
    if (username === '' || username.length > 254 || typeof password !== 'string' || req.ip === undefined) {
      res.status(400).json({ error: 'username and password are required' });
      return;
    }
    const user = { id: ipKey(req.ip), name: username };
    // Decide first: counted as a failure until the password proves otherwise.
    const attempt = await limits.group.reserve(user);
    res.set(rateLimitHeaders(attempt, { policy: [{ windowSeconds: 15 * 60 }, { windowSeconds: 24 * 3600 }] }));
    if (!attempt.allowed) {
      res.status(429).json({ error: 'too many failed attempts', retryAfter: Math.ceil(attempt.retryAfter) });
      return;
    }
    if (await checkPassword(username, password)) {
      // A success: give the day's unit back and clear the pair's failures. The password is
      // right whatever happens to them: if the store is down, the failures stay counted, and
      // the user still logs in.
      const cleared = await Promise.allSettled([attempt.reservations[1]?.refund(), limits.consecutive.delete(pairKey(user))]);
      for (const outcome of cleared) if (outcome.status === 'rejected') console.error('login: could not clear the failures', outcome.reason);
      res.json({ ok: true });
      return;
    }
    res.status(401).json({ error: 'wrong username or password' });
  });
}
