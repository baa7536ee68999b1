// `ratewarden replay --key` end to end (the built `dist/cli.js`): ip (the address as written),
// ip/N (IPv6 grouped by network, IPv4-mapped IPv6 as IPv4), user (CLF's %u), field:PATH (a JSON
// field, nested); and the combinations that cannot work, refused with one line naming the option.
import { describe, expect, it, beforeAll } from 'vitest';
import { cli, cliJson, requireBuiltCli, stderrLines } from './support/cli.js';
import { ALB, CLF, NGINX } from './support/format-fixtures.js';

beforeAll(() => {
  requireBuiltCli();
});

/** A CLF line of `host` and `user` at `second` past 2024-03-10T14:00. */
const clf = (host: string, second: number, user = '-'): string =>
  `${host} - ${user} [10/Mar/2024:14:00:${String(second).padStart(2, '0')} +0000] "GET / HTTP/1.1" 200 1\n`;

describe('ratewarden replay --key', { timeout: 60_000 }, () => {
  // Five requests at one per second, 1 per minute allowed:
  //   by address (ip): five clients, one request each, none refused;
  //   by /64 (ip/64): 2001:db8:1:2::1 and 2001:db8:1:2:ffff::9 are 2001:db8:1:2::/64 (2 requests,
  //   1 refused), ::ffff:192.0.2.1 is 192.0.2.1 (2, 1 refused), 2001:db8:1:3::1 is its own /64.
  const V6 = [
    clf('2001:db8:1:2::1', 1, 'alice'),
    clf('2001:db8:1:2:ffff::9', 2, 'alice'),
    clf('::ffff:192.0.2.1', 3),
    clf('192.0.2.1', 4, 'bob'),
    clf('2001:DB8:1:3::1', 5, 'alice'),
  ].join('');

  it('ip keeps each address apart; ip/64 groups a /64 and IPv4-mapped IPv6 with IPv4, and reports the grouped key', () => {
    expect(cliJson(['replay', '-', '--limit', '1/1m', '--key', 'ip'], V6)).toMatchObject({ key: 'client address', clients: 5, rejected: 0 });
    const grouped = {
      key: 'client address, IPv6 grouped by /64',
      clients: 3,
      rejected: 2,
      top_limited: [
        { client: '192.0.2.1', rejected: 1, requests: 2 },
        { client: '2001:db8:1:2::/64', rejected: 1, requests: 2 },
      ],
    };
    expect(cliJson(['replay', '-', '--limit', '1/1m', '--key', 'ip/64'], V6)).toMatchObject(grouped);
    // ip/64 is the default key, as the middlewares'.
    expect(cliJson(['replay', '-', '--limit', '1/1m'], V6)).toMatchObject(grouped);
    // /32 holds every address of 2001:db8::/32 as one client; the text report shows its key.
    const wide = cli(['replay', '-', '--limit', '1/1m', '--key', 'ip/32'], V6);
    expect(wide.status).toBe(0);
    expect(wide.stdout).toMatch(/^top limited clients \(rejected \/ requests\):\n {2}2001:db8::\/32 {2}2 \/ 3\n {2}192\.0\.2\.1 {6}1 \/ 2\n/m);
  });

  it('ip/N on an ALB log (IPv6 clients written without brackets)', () => {
    expect(cliJson(['replay', '-', '--limit', '2/10s', '--key', 'ip/64'], ALB.text)).toMatchObject({
      requests: 9,
      rejected: 3,
      top_limited: [
        { client: '192.0.2.10', rejected: 2, requests: 5 },
        { client: '2001:db8::/64', rejected: 1, requests: 3 },
      ],
    });
  });

  it('user keys a CLF log by %u (every anonymous request is the one key -)', () => {
    expect(cliJson(['replay', '-', '--limit', '1/1m', '--key', 'user'], V6)).toMatchObject({
      key: 'authenticated user (%u)',
      clients: 3,
      rejected: 2,
      top_limited: [{ client: 'alice', rejected: 2, requests: 3 }],
    });
  });

  it('field:PATH keys a JSON log by another field, nested or not', () => {
    // nginx's remote_user: alice at 1, 3, 5, 11 and 12 s (2 refused at 2 per 10 s: 5 and 12),
    // bob at 2 and 4 s, "" (no user: no key, a malformed line) for the rest.
    const byUser = cliJson(['replay', '-', '--limit', '2/10s', '--key', 'field:remote_user'], NGINX.text);
    expect(byUser).toMatchObject({
      key: 'JSON field remote_user',
      requests: 7,
      malformed: 4,
      clients: 2,
      rejected: 2,
      top_limited: [{ client: 'alice', rejected: 2, requests: 5 }],
    });
    const nested = [
      '{"ts":1710079200,"request":{"client_ip":"192.0.2.1","auth":{"user":{"id":"u-17"}}}}',
      '{"ts":1710079201,"request":{"client_ip":"192.0.2.2","auth":{"user":{"id":"u-17"}}}}',
      '{"ts":1710079202,"request":{"client_ip":"192.0.2.1","auth":{"user":{"id":42}}}}',
      '{"ts":1710079203,"request":{"client_ip":"192.0.2.1","auth":{"user":null}}}',
      '',
    ].join('\n');
    const run = cli(['replay', '-', '--limit', '1/1m', '--key', 'field:request.auth.user.id', '--json'], nested);
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({
      key: 'JSON field request.auth.user.id',
      requests: 3,
      clients: 2,
      rejected: 1,
      top_limited: [{ client: 'u-17', rejected: 1, requests: 2 }],
    });
    expect(stderrLines(run)).toEqual([
      'ratewarden: line 4: malformed (no field request.auth.user.id): {"ts":1710079203,"request":{"client_ip":"192.0.2.1","auth":{"user":null}}}',
    ]);
  });

  describe('combinations that cannot work: one line naming the option, exit 2, no report', () => {
    const fails = (args: string[], input: string): string => {
      const run = cli(['replay', '-', ...args], input);
      expect(run.status, args.join(' ')).toBe(2);
      expect(run.stdout).toBe('');
      expect(stderrLines(run)).toHaveLength(1);
      return run.stderr;
    };
    const JSON_LINE = NGINX.text;

    it('field:PATH with CLF; user with JSON lines or ALB; ip/N beyond 128', () => {
      for (const format of [[], ['--format', 'clf']]) {
        expect(fails(['--key', 'field:user', ...format], CLF.text)).toBe(
          'ratewarden: `--key field:PATH` is for a JSON-lines log; this is a Common/Combined Log Format log (keys: ip, ip/N, user)\n',
        );
        expect(fails(['--key', 'user', ...(format.length > 0 ? ['--format', 'json'] : [])], JSON_LINE)).toBe(
          'ratewarden: `--key user` is for a Common/Combined Log Format log; this is a JSON-lines log (keys: ip, ip/N, field:PATH)\n',
        );
        expect(fails(['--key', 'user', ...(format.length > 0 ? ['--format', 'alb'] : [])], ALB.text)).toBe(
          'ratewarden: `--key user` is for a Common/Combined Log Format log; this is an AWS ALB log (keys: ip, ip/N)\n',
        );
      }
      expect(fails(['--key', 'field:request.client_ip'], ALB.text)).toBe(
        'ratewarden: `--key field:PATH` is for a JSON-lines log; this is an AWS ALB log (keys: ip, ip/N)\n',
      );
      expect(fails(['--key', 'ip/129'], CLF.text)).toMatch(/^ratewarden: expected `--key` to be ip\/N \(N from 1 to 128: IPv6 grouped by \/N\), ip \(addresses as written\), user or field:PATH \(a JSON field\), got `ip\/129`\n$/);
      expect(fails(['--key', 'field:a..b'], JSON_LINE)).toMatch(/^ratewarden: expected `--key` to be .*, got `field:a\.\.b`\n$/);
    });

    it('--time-field and --time-format with CLF or ALB', () => {
      const message = (title: string): string => `ratewarden: \`--time-field\` and \`--time-format\` are for a JSON-lines log; this is ${title}\n`;
      expect(fails(['--time-field', 'ts'], CLF.text)).toBe(message('a Common/Combined Log Format log'));
      expect(fails(['--time-format', 'epoch-s', '--format', 'clf'], CLF.text)).toBe(message('a Common/Combined Log Format log'));
      expect(fails(['--time-field', 'request_creation_time'], ALB.text)).toBe(message('an AWS ALB log'));
      expect(fails(['--time-format', 'iso8601', '--format', 'alb'], ALB.text)).toBe(message('an AWS ALB log'));
      expect(fails(['--time-format', 'iso'], JSON_LINE)).toBe('ratewarden: expected `--time-format` to be one of auto, iso8601, epoch-s, epoch-ms, got `iso`\n');
    });
  });
});
