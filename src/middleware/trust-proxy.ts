/**
 * The start-up check of the Express and Fastify middlewares for a proxy setting that trusts
 * every hop (Express's `trust proxy` set to `true`, Fastify's `trustProxy: true`): then the
 * client address (`req.ip`, `request.ip`) is the left-most `X-Forwarded-For` entry, which any
 * client writes itself, and a limit keyed by it (the default key) is escaped by sending a
 * fresh value per request. express-rate-limit reports the same misconfiguration
 * (`ERR_ERL_PERMISSIVE_TRUST_PROXY`); ratewarden warns once, with its own code.
 *
 * Free of `node:` imports: the warning goes through `process.emitWarning` when there is a
 * `process`, else `console.warn`.
 *
 * @module
 */

/** The `code` of the warning: see {@link warnPermissiveTrustProxy}. */
export const PERMISSIVE_TRUST_PROXY = 'ERR_RATEWARDEN_PERMISSIVE_TRUST_PROXY';

/**
 * How many hops the probe asks about: a setting that trusts this many public addresses in a
 * row trusts, in practice, every hop (real chains of proxies are a few hops long).
 */
const PROBE_HOPS = 32;

/** An address of hop `i` of the probe: TEST-NET-3 (RFC 5737), never a proxy anyone runs. */
function probeAddress(i: number): string {
  return `203.0.113.${i + 1}`;
}

/**
 * Whether a trust function of the `proxy-addr` shape (`(address, hopIndex) => boolean`, as
 * Express keeps in its `trust proxy fn` setting) trusts {@link PROBE_HOPS} documentation
 * addresses in a row; `false` when it is not a function or throws.
 */
export function trustsEveryHop(trust: unknown): boolean {
  if (typeof trust !== 'function') return false;
  try {
    for (let i = 0; i < PROBE_HOPS; i++) if ((trust as (address: string, i: number) => unknown)(probeAddress(i), i) !== true) return false;
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether a Fastify request's `ips` getter (defined by Fastify when `trustProxy` is set) trusts
 * every hop: it is asked about a made-up request whose peer and `X-Forwarded-For` are
 * {@link PROBE_HOPS} documentation addresses, and trusts every hop when it returns them all.
 * `false` when the request has no such getter (no `trustProxy`) or it throws.
 */
export function fastifyTrustsEveryHop(request: object): boolean {
  let proto: object | null = Object.getPrototypeOf(request) as object | null;
  while (proto !== null) {
    // Fastify's getter reads only `this.raw`: it is called on a made-up request, unbound on purpose.
    // eslint-disable-next-line @typescript-eslint/unbound-method
    const getter = Object.getOwnPropertyDescriptor(proto, 'ips')?.get;
    if (getter !== undefined) {
      const forwarded = Array.from({ length: PROBE_HOPS }, (_, i) => probeAddress(i + 1)).join(', ');
      const probe = { raw: { socket: { remoteAddress: probeAddress(0) }, headers: { 'x-forwarded-for': forwarded } } };
      try {
        const ips: unknown = getter.call(probe);
        return Array.isArray(ips) && ips.length === PROBE_HOPS + 1;
      } catch {
        return false;
      }
    }
    proto = Object.getPrototypeOf(proto) as object | null;
  }
  return false;
}

/**
 * Warns, as a `RateWardenWarning` with code {@link PERMISSIVE_TRUST_PROXY}, that `setting` trusts
 * every hop, so the default key (the client address) is whatever a client puts in
 * `X-Forwarded-For`.
 */
export function warnPermissiveTrustProxy(setting: string, address: string): void {
  const message =
    `ratewarden: ${setting} trusts every hop, so ${address} (the default rate-limit key) is the ` +
    'left-most X-Forwarded-For entry, which any client sets itself to escape the limit. ' +
    'Trust only the proxies you run (their hop count or addresses), or pass your own `key`.';
  const process = (globalThis as { process?: { emitWarning?: (message: string, options: object) => void } }).process;
  if (typeof process?.emitWarning === 'function') process.emitWarning(message, { type: 'RateWardenWarning', code: PERMISSIVE_TRUST_PROXY });
  else console.warn(`${message} (${PERMISSIVE_TRUST_PROXY})`);
}
