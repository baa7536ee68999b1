// Small access logs made here, one per format the replay reads (CLF, JSON lines as Caddy and
// nginx `escape=json` write them, AWS ALB), for the end-to-end tests of `ratewarden replay` and
// `suggest` (test/replay-formats.test.ts and its neighbours). Documentation addresses
// only (192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24, 2001:db8::/32); no personal data.
//
// Every log carries the same nine requests (times from T0 = 2024-03-10T14:00:00Z = 1710079200 s),
// each written in its format's own way, in an order that is not time order, plus malformed lines:
//
//   A = 192.0.2.10 at 1, 3, 5, 11 and 12 s; B at 2, 2 and 2 s; C at 4 s
//
// In time order (ties in file order), through `--limit 2/10s` (the sliding-window log: evict the
// times t <= now - 10 s, allow when fewer than 2 remain, record only what is allowed):
//   A@1  allowed   A: [1]
//   B@2  allowed   B: [2]
//   B@2  allowed   B: [2, 2]
//   B@2  REFUSED   (2 live)
//   A@3  allowed   A: [1, 3]
//   C@4  allowed   C: [4]
//   A@5  REFUSED   (nothing <= -5 to evict; 2 live)
//   A@11 allowed   evicts 1 (<= 1); A: [3, 11]
//   A@12 REFUSED   (nothing <= 2 to evict; 2 live)
// => 9 requests, 6 allowed, 3 refused; 3 clients, 2 limited (A 2 of 5, B 1 of 3).
// Each log below says how its own writing of these times can go wrong (zones, order, fractions)
// and what the outcome would then be, so that the tests' expectations are seen to be able to fail.

/** 2024-03-10T14:00:00Z in milliseconds. */
export const T0_MS = Date.UTC(2024, 2, 10, 14, 0, 0);

/** The outcome every log below must give with `--limit 2/10s` (as `--json` writes it). */
export function expectedOutcome(a: string, b: string, extra: Record<string, unknown>): Record<string, unknown> {
  return {
    requests: 9,
    allowed: 6,
    rejected: 3,
    clients: 3,
    clients_limited: 2,
    top_limited: [
      { client: a, rejected: 2, requests: 5 },
      { client: b, rejected: 1, requests: 3 },
    ],
    threshold: 2,
    window_seconds: 10,
    strategy: 'sliding-window-log',
    ...extra,
  };
}

/** A malformed line as stderr shows it: without its line ending, its first 80 characters. */
export function shown(line: string): string {
  return line.replace(/\r?\n$/, '').slice(0, 80);
}

/** A log made here, with what the replay must report of it. */
export interface FormatFixture {
  /** The format's name, as `--format` takes it. */
  readonly format: 'clf' | 'json' | 'alb';
  /** The log's text. */
  readonly text: string;
  /** The `--json` fields the replay must print with `--limit 2/10s`. */
  readonly expected: Record<string, unknown>;
  /** The malformed-line lines the replay must write on stderr, in order. */
  readonly stderr: readonly string[];
}

// ------------------------------------------------------------------------------------------
// CLF (Combined), local times with their zone offsets, as Apache and nginx write them.
//
//  line  client          written as                      UTC, s from T0
//   1    A 192.0.2.10    10/Mar/2024:14:00:05 +0000       5
//   2    A               10/Mar/2024:14:00:01 +0000       1   (earlier than line 1)
//   3    B 198.51.100.7  10/Mar/2024:07:00:02 -0700       2
//   4    malformed: second 99 (bad time of day)
//   5    A               10/Mar/2024:15:00:03 +0100       3   (CRLF)
//   6    B               10/Mar/2024:14:00:02 +0000       2
//   7    A               10/Mar/2024:14:00:11 +0000      11
//   8    C 2001:db8::1   10/Mar/2024:14:00:04 +0000       4
//   9    B               10/Mar/2024:19:30:02 +0530       2   (three writings of one instant: lines 3, 6, 9)
//  10    malformed: an empty line before the last request
//  11    malformed: the request's quote never closes (unterminated request)
//  12    A               10/Mar/2024:14:00:12 +0000      12
//  then two empty lines: ignored.
// Can fail: with the zones ignored (local time read as UTC), B is at -25198, 2 and 19802 s and A at
// 1, 5, 11, 12 and 3603 s: 1 refusal (A@12), not 3. In file order, each client's clock clamped as
// the limiter clamps it (a time earlier than its latest counts as the latest), A is at 5, 5, 5, 11,
// 12: 3 refusals for A, 4 in all.
const CLF_LINES = [
  '192.0.2.10 - - [10/Mar/2024:14:00:05 +0000] "GET /a HTTP/1.1" 200 512 "-" "curl/8.5.0"\n',
  '192.0.2.10 - - [10/Mar/2024:14:00:01 +0000] "GET /b HTTP/1.1" 200 512 "-" "curl/8.5.0"\n',
  '198.51.100.7 - - [10/Mar/2024:07:00:02 -0700] "POST /login HTTP/1.1" 302 0 "https://example.com/" "Mozilla/5.0"\n',
  '192.0.2.99 - - [10/Mar/2024:14:00:99 +0000] "GET / HTTP/1.1" 200 5\n',
  '192.0.2.10 - - [10/Mar/2024:15:00:03 +0100] "GET /c HTTP/1.1" 200 -\r\n',
  '198.51.100.7 - - [10/Mar/2024:14:00:02 +0000] "GET /d HTTP/1.1" 200 17\n',
  '192.0.2.10 - - [10/Mar/2024:14:00:11 +0000] "GET /e HTTP/1.1" 200 512\n',
  '2001:db8::1 - - [10/Mar/2024:14:00:04 +0000] "GET /f HTTP/1.1" 200 512\n',
  '198.51.100.7 - - [10/Mar/2024:19:30:02 +0530] "GET /g HTTP/1.1" 304 -\n',
  '\n',
  '203.0.113.5 - - [10/Mar/2024:14:00:06 +0000] "GET /x HTTP/1.1 200 5\n',
  '192.0.2.10 - - [10/Mar/2024:14:00:12 +0000] "GET /h HTTP/1.1" 200 512\n',
  '\n',
  '\n',
];
export const CLF: FormatFixture = {
  format: 'clf',
  text: CLF_LINES.join(''),
  expected: expectedOutcome('192.0.2.10', '198.51.100.7', {
    lines: 12,
    malformed: 3,
    format: 'clf',
    key: 'client address, IPv6 grouped by /64',
    time: '[timestamp]',
    first_time: '2024-03-10T14:00:01.000Z',
    last_time: '2024-03-10T14:00:12.000Z',
  }),
  stderr: [
    `ratewarden: line 4: malformed (bad time of day): ${shown(CLF_LINES[3] as string)}`,
    'ratewarden: line 10: malformed (empty line): ',
    `ratewarden: line 11: malformed (unterminated request): ${shown(CLF_LINES[10] as string)}`,
  ],
};

// ------------------------------------------------------------------------------------------
// Caddy's JSON access log (Caddy 2.7+): `ts` in epoch seconds with a fraction, the client in
// the nested `request.client_ip`, headers as objects of arrays. Caddy writes UTC epochs: no zones
// here; the times are out of order and their fractions are floored to the millisecond.
//
//  line  client          ts (s from T0)
//   1    malformed: Caddy's own "server running" entry: a ts, no client (no key field among the defaults)
//   2    A 192.0.2.10    5.25
//   3    A               1.0009   -> 1.000 (floored)
//   4    B 198.51.100.7  2.5
//   5    malformed: a line cut short (unterminated JSON)
//   6    A               3.75
//   7    B               2.5
//   8    A              11
//   9    C 2001:db8::1   4
//  10    B               2.5
//  11    malformed: an empty line before the last request
//  12    A              11.0004   -> 11.000 (floored; after line 8 in file order)
//  then two empty lines: ignored.
// In time order: A@1 B@2.5 B@2.5 B@2.5 A@3.75 C@4 A@5.25 A@11(l8) A@11(l12): as the table at the
// top with A's last request at 11 s: at A@11(l8), 1 is evicted (1 <= 11 - 10): allowed, A: [3.75,
// 11]; A@11(l12) refused. 3 refusals.
// Can fail: kept to the microsecond (or rounded to the ms), A's first request is after 1 s: it is
// not evicted at 11 s, both A@11 are refused: 4 refusals. In file order, clamped: A at 5.25,
// 5.25, 5.25, 11, 11: 3 refusals for A, 4 in all.
const caddy = (ts: string, client: string, uri: string): string =>
  `{"level":"info","ts":${ts},"logger":"http.log.access.log0","msg":"handled request","request":{"remote_ip":"${client}",` +
  `"remote_port":"41234","client_ip":"${client}","proto":"HTTP/2.0","method":"GET","host":"example.com","uri":"${uri}",` +
  `"headers":{"User-Agent":["curl/8.5.0"],"Accept":["*/*"]},"tls":{"resumed":false,"version":772,"server_name":"example.com"}},` +
  `"bytes_read":0,"user_id":"","duration":0.000512,"size":512,"status":200,"resp_headers":{"Server":["Caddy"],"Content-Type":["text/html"]}}\n`;
const CADDY_CUT = '{"level":"info","ts":1710079203,"logger":"http.log.access.log0","msg":"handled request","request":{"client_ip":"192.0.2.10","uri":"/cut';
const CADDY_LINES = [
  '{"level":"info","ts":1710079199.5,"logger":"http","msg":"server running","name":"srv0","protocols":["h1","h2","h3"]}\n',
  caddy('1710079205.25', '192.0.2.10', '/a'),
  caddy('1710079201.0009', '192.0.2.10', '/b'),
  caddy('1710079202.5', '198.51.100.7', '/login'),
  `${CADDY_CUT}\n`,
  caddy('1710079203.75', '192.0.2.10', '/c'),
  caddy('1710079202.5', '198.51.100.7', '/d'),
  caddy('1710079211', '192.0.2.10', '/e'),
  caddy('1710079204', '2001:db8::1', '/f'),
  caddy('1710079202.5', '198.51.100.7', '/g'),
  '\n',
  caddy('1710079211.0004', '192.0.2.10', '/h'),
  '\n',
  '\n',
];
export const CADDY: FormatFixture = {
  format: 'json',
  text: CADDY_LINES.join(''),
  expected: expectedOutcome('192.0.2.10', '198.51.100.7', {
    lines: 12,
    malformed: 3,
    format: 'json',
    key: 'JSON field request.client_ip, IPv6 grouped by /64',
    time: 'JSON field ts (auto)',
    first_time: '2024-03-10T14:00:01.000Z',
    last_time: '2024-03-10T14:00:11.000Z',
  }),
  stderr: [
    `ratewarden: line 1: malformed (no key field among the defaults): ${shown(CADDY_LINES[0] as string)}`,
    `ratewarden: line 5: malformed (unterminated JSON): ${shown(CADDY_CUT)}`,
    'ratewarden: line 11: malformed (empty line): ',
  ],
};

// ------------------------------------------------------------------------------------------
// nginx `log_format … escape=json`: `$time_iso8601` is the server's local time with its offset;
// logs merged from servers in several zones (or a server whose zone changed) mix the offsets.
//
//  line  client          time_iso8601                 UTC, s from T0
//   1    A 192.0.2.10    2024-03-10T15:00:05+01:00     5
//   2    A               2024-03-10T14:00:01+00:00     1
//   3    B 198.51.100.7  2024-03-10T07:00:02-07:00     2
//   4    malformed: $time_local in the field (bad time in time_iso8601)
//   5    A               2024-03-10T16:00:03+02:00     3
//   6    B               2024-03-10T14:00:02+00:00     2
//   7    A               2024-03-10T14:00:11+00:00    11
//   8    C 2001:db8::1   2024-03-10T09:30:04-04:30     4
//   9    B               2024-03-10T19:30:02+05:30     2
//  10    malformed: an empty remote_addr (empty remote_addr)
//  11    A               2024-03-10T14:00:12Z         12
// => as the table at the top: 3 refusals.
// Can fail: with the offsets ignored, A is at 1, 11, 12, 3605 and 7203 s and B at -25198, 2 and
// 19802 s: no refusal at all.
const nginx = (time: string, addr: string, user: string, request: string): string =>
  `{"time_iso8601":"${time}","remote_addr":"${addr}","remote_user":"${user}","request":"${request}","status":200,` +
  `"body_bytes_sent":512,"http_referer":"","http_user_agent":"Mozilla/5.0 (X11; Linux x86_64)","request_time":0.002}\n`;
const NGINX_LINES = [
  nginx('2024-03-10T15:00:05+01:00', '192.0.2.10', 'alice', 'GET /a HTTP/1.1'),
  nginx('2024-03-10T14:00:01+00:00', '192.0.2.10', 'alice', 'GET /b HTTP/1.1'),
  nginx('2024-03-10T07:00:02-07:00', '198.51.100.7', '', 'POST /login HTTP/1.1'),
  nginx('10/Mar/2024:14:00:06 +0000', '203.0.113.5', '', 'GET / HTTP/1.1'),
  nginx('2024-03-10T16:00:03+02:00', '192.0.2.10', 'alice', 'GET /c HTTP/1.1'),
  nginx('2024-03-10T14:00:02+00:00', '198.51.100.7', 'bob', 'GET /d HTTP/1.1'),
  nginx('2024-03-10T14:00:11+00:00', '192.0.2.10', 'alice', 'GET /e?q=\\"x\\" HTTP/1.1'),
  nginx('2024-03-10T09:30:04-04:30', '2001:db8::1', 'bob', 'GET /f HTTP/1.1'),
  nginx('2024-03-10T19:30:02+05:30', '198.51.100.7', '', 'GET /g HTTP/1.1'),
  nginx('2024-03-10T14:00:07+00:00', '', '', 'GET / HTTP/1.1'),
  nginx('2024-03-10T14:00:12Z', '192.0.2.10', 'alice', 'GET /h HTTP/1.1'),
];
export const NGINX: FormatFixture = {
  format: 'json',
  text: NGINX_LINES.join(''),
  expected: expectedOutcome('192.0.2.10', '198.51.100.7', {
    lines: 11,
    malformed: 2,
    format: 'json',
    key: 'JSON field remote_addr, IPv6 grouped by /64',
    time: 'JSON field time_iso8601 (auto)',
    first_time: '2024-03-10T14:00:01.000Z',
    last_time: '2024-03-10T14:00:12.000Z',
  }),
  stderr: [
    `ratewarden: line 4: malformed (bad time in time_iso8601): ${shown(NGINX_LINES[3] as string)}`,
    `ratewarden: line 10: malformed (empty remote_addr): ${shown(NGINX_LINES[9] as string)}`,
  ],
};

// ------------------------------------------------------------------------------------------
// AWS ALB: entries are written when the response is sent (`time`), so in `time` order, not in
// the order the requests came (`request_creation_time`, which the replay uses). All in UTC.
//
//  line  type   client               time (s from T0)  request_creation_time (s from T0)
//   1    http   A 192.0.2.10:41234     5.1              1
//   2    https  A 192.0.2.10:41235     5.2              5.15
//   3    h2     B 2001:db8::7:50718    5.3              2
//   4    malformed: the port is not a number (bad client port)
//   5    h2     A 192.0.2.10:41236     5.4              3
//   6    https  B 2001:db8::7:50719    5.5              2
//   7    http   A 192.0.2.10:41237    11.1             11
//   8    h2     C 203.0.113.9:3000     11.2              4
//   9    https  B 2001:db8::7:50720   11.3              2
//  10    malformed: cut after the client (missing fields)
//  11    malformed: request_creation_time without a zone (bad request_creation_time)
//  12    malformed: a CLF line among the entries (bad type)
//  13    malformed: an empty line
//  14    malformed: an entry cut after its time (no elb)
//  15    http   A 192.0.2.10:41238    12.1             12
// => as the table at the top (A@5.15 in place of A@5): 3 refusals; 6 malformed lines, of which
// the first five are shown.
// Can fail: timed by `time` instead, A is at 5.1, 5.2, 5.4, 11.1, 12.1 (3 refused) and B at 5.3,
// 5.5, 11.3 (1 refused): 4 refusals.
const alb = (type: string, time: string, client: string, created: string): string => {
  const tls = type === 'http' ? '- -' : 'ECDHE-RSA-AES128-GCM-SHA256 TLSv1.2';
  const scheme = type === 'http' ? 'http://example.com:80' : 'https://example.com:443';
  const cert = type === 'http' ? '"-"' : '"arn:aws:acm:us-east-2:123456789012:certificate/12345678-1234-1234-1234-123456789012"';
  return (
    `${type} ${time} app/my-alb/50dc6c495c0c9188 ${client} 10.0.1.15:80 0.000 0.001 0.000 200 200 34 366 ` +
    `"GET ${scheme}/ HTTP/${type === 'h2' ? '2.0' : '1.1'}" "curl/8.5.0" ${tls} ` +
    `arn:aws:elasticloadbalancing:us-east-2:123456789012:targetgroup/my-targets/73e2d6bc24d8a067 ` +
    `"Root=1-65edbf00-0123456789abcdef01234567" "example.com" ${cert} 0 ${created} "forward" "-" "-" "10.0.1.15:80" "200" "-" "-" TID_0123\n`
  );
};
const at = (seconds: string): string => `2024-03-10T14:00:${seconds}000Z`;
const ALB_LINES = [
  alb('http', at('05.100'), '192.0.2.10:41234', at('01.000')),
  alb('https', at('05.200'), '192.0.2.10:41235', at('05.150')),
  alb('h2', at('05.300'), '2001:db8::7:50718', at('02.000')),
  alb('https', at('05.350'), '192.0.2.44:port', at('02.500')),
  alb('h2', at('05.400'), '192.0.2.10:41236', at('03.000')),
  alb('https', at('05.500'), '2001:db8::7:50719', at('02.000')),
  alb('http', at('11.100'), '192.0.2.10:41237', at('11.000')),
  alb('h2', at('11.200'), '203.0.113.9:3000', at('04.000')),
  alb('https', at('11.300'), '2001:db8::7:50720', at('02.000')),
  `https ${at('11.400')} app/my-alb/50dc6c495c0c9188 192.0.2.10:41239\n`,
  alb('https', at('11.500'), '192.0.2.10:41240', '2024-03-10T14:00:11.450000'),
  '192.0.2.10 - - [10/Mar/2024:14:00:11 +0000] "GET / HTTP/1.1" 200 5\n',
  '\n',
  `http ${at('12.000')}\n`,
  alb('http', at('12.100'), '192.0.2.10:41238', at('12.000')),
];
export const ALB: FormatFixture = {
  format: 'alb',
  text: ALB_LINES.join(''),
  // The default key, ip/64: the IPv6 client is its /64 network.
  expected: expectedOutcome('192.0.2.10', '2001:db8::/64', {
    lines: 15,
    malformed: 6,
    format: 'alb',
    key: 'client address, IPv6 grouped by /64',
    time: 'request_creation_time',
    first_time: '2024-03-10T14:00:01.000Z',
    last_time: '2024-03-10T14:00:12.000Z',
  }),
  stderr: [
    `ratewarden: line 4: malformed (bad client port): ${shown(ALB_LINES[3] as string)}`,
    `ratewarden: line 10: malformed (missing fields): ${shown(ALB_LINES[9] as string)}`,
    `ratewarden: line 11: malformed (bad request_creation_time): ${shown(ALB_LINES[10] as string)}`,
    `ratewarden: line 12: malformed (bad type): ${shown(ALB_LINES[11] as string)}`,
    'ratewarden: line 13: malformed (empty line): ',
    'ratewarden: 1 more malformed line not shown (6 in all)',
  ],
};

/** The four logs, by a name for the tests' titles. */
export const FORMAT_FIXTURES: Readonly<Record<string, FormatFixture>> = { clf: CLF, caddy: CADDY, nginx: NGINX, alb: ALB };
