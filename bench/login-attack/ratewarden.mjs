// The slot for ratewarden's own login recipe (issue 22): consecutive failures per (username, IP),
// reset on success, plus failures per IP per day, as one RateLimitGroup, decided before the
// password check and refunded on success, so that the limit holds under any concurrency.
//
// NOT WRITTEN YET: the API it needs (RateLimiter.prototype.reserve and the refunds) does not
// exist yet. Until it does, the harness prints a note and shows no figure for ratewarden: no
// result is made up. Whoever adds the API fills in buildRatewardenLogin below (same contract as
// the contestants in peers.mjs: return `{ handlers }` for POST /login) and removes the
// `notWritten` return.

const DIST = new URL('../../dist/index.js', import.meta.url);

/**
 * Why the ratewarden slot cannot run, or undefined when it can: dist/ missing (run `npm run
 * build`), no `reserve` on RateLimiter yet, or the recipe below not filled in yet.
 */
export async function ratewardenSkipReason() {
  let ratewarden;
  try {
    ratewarden = await import(DIST.href);
  } catch (error) {
    return `ratewarden's dist/index.js could not be loaded (run \`npm run build\`): ${error.message.split('\n')[0]}`;
  }
  if (typeof ratewarden.RateLimiter?.prototype?.reserve !== 'function') {
    return "ratewarden's RateLimiter has no reserve() yet: its login recipe is not measured (no result)";
  }
  if (buildRatewardenLogin.notWritten) {
    return 'RateLimiter.reserve() exists, but bench/login-attack/ratewarden.mjs has no recipe yet: fill in buildRatewardenLogin';
  }
  return undefined;
}

/**
 * ratewarden's login recipe for POST /login: `{ store, redis, limit, checkPassword }` as in
 * peers.mjs (`redis` is an ioredis client for the store "redis"). To be written once the API
 * exists; it must decide before calling checkPassword (so that no more than `limit` checks run
 * under 200 parallel attempts), keep the failure on a failed check and give it back on a success.
 */
export async function buildRatewardenLogin(/* { store, redis, limit, checkPassword } */) {
  // const { RateLimiter, RateLimitGroup } = await import(DIST.href);
  throw new Error('ratewarden login recipe not written yet (see ratewardenSkipReason)');
}
buildRatewardenLogin.notWritten = true;

export const ratewardenContestant = {
  id: 'ratewarden',
  title: "ratewarden's login recipe",
  stores: ['memory', 'redis'],
  packages: [],
  skipReason: ratewardenSkipReason,
  build: buildRatewardenLogin,
};
