// pino: one structured log line per decision, from the limiter's `decision` listener: refusals
// as warnings, allowed requests at debug level (off unless the logger's level is debug or lower).
import { pino, type Logger } from 'pino';
import { RateLimiter } from 'ratewarden';

/** Logs each of the limiter's decisions to `logger`; returns the unsubscribe function. */
function logDecisions(limiter: RateLimiter, logger: Logger): () => void {
  return limiter.on('decision', (key, result, cost, info) => {
    const fields = {
      key,
      allowed: result.allowed,
      remaining: result.remaining,
      // Seconds, rounded up as in Retry-After (0 when allowed; null for a cost above the limit).
      retryAfter: Math.ceil(result.retryAfter),
      cost,
      limit: info.name,
      tier: info.tier,
      shadow: info.shadow,
    };
    if (result.allowed) logger.debug(fields, 'rate limit: allowed');
    else logger.warn(fields, info.shadow ? 'rate limit: would refuse (shadow mode)' : 'rate limit: refused');
  });
}

// The demo: a limit of 2 per minute named "api", a pro tier of 100, and three requests of a free
// user, one of a pro user and two watched in shadow mode. The logger leaves out pid, hostname and
// time only so that this demo prints the same lines at every run; keep them in an application.
const logger = pino({ level: 'debug', base: undefined, timestamp: false });
const pro = { tier: 'pro', threshold: 100, windowSeconds: 60 };
const limiter = new RateLimiter({
  name: 'api',
  tier: 'free', // the default quota's tier
  threshold: 2,
  windowSeconds: 60,
  limitFor: (_user, key) => (key === 'bob' ? pro : undefined),
});
logDecisions(limiter, logger);
for (let i = 0; i < 3; i++) await limiter.allowRequest('alice');
await limiter.allowRequest('bob');
await limiter.allowRequest('carol', { shadow: true });
await limiter.allowRequest('carol', { shadow: true, cost: 2 });
