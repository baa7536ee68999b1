// ratewarden's own login recipe (issue 22), the one in examples/login/recipe.ts (loaded through
// tsx: `npm run bench:login` runs this harness with `node --import tsx`): 5 failures per
// (username, IP) per 15 minutes then a 15-minute block, plus 100 failures per IP per day, as one
// RateLimitGroup reserved BEFORE the password check and refunded on success, so that the limit
// holds under any concurrency. In memory, or on the harness's Redis (ioredis) with
// RedisSlidingWindowLog for both limits.

const DIST = new URL('../../dist/index.js', import.meta.url);
const RECIPE = new URL('../../examples/login/recipe.ts', import.meta.url);

/** Why the ratewarden row cannot run, or undefined when it can: dist/ or tsx missing. */
export async function ratewardenSkipReason() {
  try {
    await import(DIST.href);
  } catch (error) {
    return `ratewarden's dist/index.js could not be loaded (run \`npm run build\`): ${error.message.split('\n')[0]}`;
  }
  try {
    await import(RECIPE.href);
  } catch (error) {
    return `examples/login/recipe.ts could not be loaded (run the harness with \`node --import tsx\`, as \`npm run bench:login\` does): ${error.message.split('\n')[0]}`;
  }
  return undefined;
}

/**
 * The recipe for POST /login, with the harness's contract (peers.mjs): `{ store, redis, limit,
 * checkPassword }` → `{ handlers }`. The recipe's limit is its own 5 (the harness's default).
 */
export async function buildRatewardenLogin({ store, redis, limit, checkPassword }) {
  const { loginLimits, loginRoute } = await import(RECIPE.href);
  const { RedisSlidingWindowLog } = await import(new URL('../../dist/redis.js', import.meta.url).href);
  if (limit !== 5) throw new Error(`the recipe's limit is 5 (examples/login/recipe.ts), not ${limit}`);
  const limits = loginLimits(store === 'redis' ? (name) => new RedisSlidingWindowLog({ client: redis, prefix: `login:${name}:` }) : undefined);
  const express = (await import('express')).default;
  const router = express.Router();
  loginRoute(router, limits, async (username, password) => (await checkPassword(username, password)).isLoggedIn === true);
  // The harness posts { email, password }; the recipe reads { username, password }.
  const rename = (req, _res, next) => {
    req.body.username ??= req.body.email;
    next();
  };
  return { handlers: [rename, router] };
}

export const ratewardenContestant = {
  id: 'ratewarden',
  title: "ratewarden's login recipe",
  stores: ['memory', 'redis'],
  packages: [],
  skipReason: ratewardenSkipReason,
  build: buildRatewardenLogin,
};
