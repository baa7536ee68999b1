// The AWS Application Load Balancer format (src/formats/alb.ts): entries of each type, IPv6
// clients, request_creation_time and its fallback, each reason of a malformed entry.
import { describe, expect, it } from 'vitest';
import { AlbFormat } from '../../src/formats/alb.js';
import { decodeKeyBytes } from '../../src/formats/format.js';
import { sortByTime } from '../../src/order.js';
import { RequestCollector } from '../../src/request-collector.js';

/** An entry shaped as AWS documents them, with documentation addresses. */
function entry(type: string, client: string, time = '2024-03-10T14:02:07.186641Z', created = '2024-03-10T14:02:06.364000Z'): string {
  const tls = type === 'http' || type === 'ws' ? '- -' : 'ECDHE-RSA-AES128-GCM-SHA256 TLSv1.2';
  return (
    `${type} ${time} app/my-loadbalancer/50dc6c495c0c9188 ${client} 10.0.0.1:80 0.000 0.001 0.000 200 200 34 366 ` +
    `"GET https://www.example.com:443/items?q=%22a%22 HTTP/1.1" "Mozilla/5.0 (X11; Linux x86_64) \\"quoted\\"" ${tls} ` +
    `arn:aws:elasticloadbalancing:us-east-2:123456789012:targetgroup/my-targets/73e2d6bc24d8a067 ` +
    `"Root=1-58337262-36d228ad5d99923122bbe354" "www.example.com" "arn:aws:acm:us-east-2:123456789012:certificate/12345678-1234-1234-1234-123456789012" ` +
    `0 ${created} "forward" "-" "-" "10.0.0.1:80" "200" "-" "-" TID_1234`
  );
}

function parse(line: string): { ok: boolean; timeMs: number; key: string; reason: string } {
  const format = new AlbFormat();
  const bytes = Buffer.from(line, 'utf8');
  const ok = format.parse(bytes, 0, bytes.length);
  return { ok, timeMs: format.timeMs, key: ok ? decodeKeyBytes(bytes, format.keyStart, format.keyEnd) : '', reason: format.reason };
}

const CREATED = Date.UTC(2024, 2, 10, 14, 2, 6, 364);

describe('AlbFormat', () => {
  it.each(['http', 'https', 'h2', 'grpcs', 'ws', 'wss'])('reads a %s entry: the client address and request_creation_time', (type) => {
    expect(parse(entry(type, '192.0.2.10:2817'))).toEqual({ ok: true, timeMs: CREATED, key: '192.0.2.10', reason: 'none' });
  });

  it('keys an IPv6 client as ALB writes it (no brackets: the port follows the last colon)', () => {
    expect(parse(entry('h2', '2001:db8:4538:1:bcf4:5264:e01c:f215:50718')).key).toBe('2001:db8:4538:1:bcf4:5264:e01c:f215');
    expect(parse(entry('h2', '2001:db8::7:50718')).key).toBe('2001:db8::7');
    expect(parse(entry('https', '[2001:db8::7]:443')).key).toBe('2001:db8::7');
  });

  it('falls back on time when request_creation_time is - or the entry ends before it', () => {
    const time = Date.UTC(2024, 2, 10, 14, 2, 7, 186);
    expect(parse(entry('http', '192.0.2.10:2817', undefined, '-')).timeMs).toBe(time);
    const old = entry('https', '192.0.2.10:2817').split(' 0 2024-03-10T14:02:06')[0] as string;
    expect(parse(old)).toMatchObject({ ok: true, timeMs: time });
    const short = entry('http', '192.0.2.10:2817').split(' - - arn:')[0] as string;
    expect(parse(short)).toMatchObject({ ok: true, timeMs: time });
  });

  it('applies zone offsets and a trailing \\r; ignores fields appended after the known ones', () => {
    expect(parse(entry('http', '192.0.2.10:1', undefined, '2024-03-10T16:02:06.364+02:00')).timeMs).toBe(CREATED);
    expect(parse(`${entry('http', '192.0.2.10:1')}\r`).ok).toBe(true);
    expect(parse(`${entry('http', '192.0.2.10:1')} "new field" x`).ok).toBe(true);
  });

  const ok = entry('https', '192.0.2.10:2817');
  it.each([
    ['empty line', ''],
    ['bad type', ` ${ok}`],
    ['bad type', ok.replace('https ', 'HTTPS ')],
    ['bad type', 'https'],
    ['bad time', ok.replace('2024-03-10T14:02:07.186641Z', '2024-03-10T14:02:07.186641')],
    ['bad time', ok.replace('2024-03-10T14:02:07.186641Z', '10/Mar/2024:14:02:07')],
    ['no elb', 'https 2024-03-10T14:02:07Z'],
    ['no elb', 'https 2024-03-10T14:02:07Z app/x'],
    ['no client:port', ok.replace('192.0.2.10:2817', '192.0.2.10')],
    ['no client:port', ok.replace('192.0.2.10:2817', ':2817')],
    ['no client:port', ok.replace('192.0.2.10:2817', '[]:2817')],
    ['bad client port', ok.replace('192.0.2.10:2817', '192.0.2.10:')],
    ['bad client port', ok.replace('192.0.2.10:2817', '192.0.2.10:28x7')],
    ['missing fields', ok.slice(0, ok.indexOf(' 200 200'))],
    ['missing fields', ok.replace(' 0.000 0.001', '  0.001')],
    ['no quoted request', ok.replace('"GET https://www.example.com:443/items?q=%22a%22 HTTP/1.1"', 'GET')],
    ['unterminated request', ok.slice(0, ok.indexOf(' HTTP/1.1"'))],
    ['no quoted user agent', ok.replace(' "Mozilla', ' Mozilla')],
    ['unterminated user agent', ok.slice(0, ok.indexOf('x86_64)'))],
    ['bad request_creation_time', ok.replace('2024-03-10T14:02:06.364000Z', '2024-03-10T14:02:06')],
  ])('%s: %j', (reason, line) => {
    expect(parse(line)).toMatchObject({ ok: false, reason });
    expect(parse(ok).ok).toBe(true);
  });

  it('never reads past the end it is given', () => {
    const format = new AlbFormat();
    const chunk = Buffer.from(`${ok}\n${ok}\n`);
    const cut = ok.indexOf(' 0 2024-03-10T14:02:06');
    // Cut before request_creation_time: time is used, nothing of the next line.
    expect(format.parse(chunk, 0, cut)).toBe(true);
    expect(format.timeMs).toBe(Date.UTC(2024, 2, 10, 14, 2, 7, 186));
    expect(format.parse(chunk, 0, ok.indexOf('x86_64)'))).toBe(false);
    expect(format.parse(chunk, ok.length + 1, 2 * ok.length + 1)).toBe(true);
    expect(format.timeMs).toBe(CREATED);
  });

  it('orders entries written out of order (ALB logs by response time), ties in file order', () => {
    const collector = new RequestCollector(5, new AlbFormat());
    const lines = [
      entry('h2', '203.0.113.1:1', '2024-03-10T14:02:09.000000Z', '2024-03-10T14:02:03.500000Z'),
      entry('https', '203.0.113.2:1', '2024-03-10T14:02:08.000000Z', '2024-03-10T15:02:05.000000+01:00'),
      entry('http', '2001:db8::1:1', '2024-03-10T14:02:07.000000Z', '2024-03-10T14:02:03.500000Z'),
      'not an entry',
      entry('wss', '203.0.113.2:2', '2024-03-10T14:02:07.000000Z', '-'),
    ];
    for (const line of lines) {
      const bytes = Buffer.from(line);
      collector.line(bytes, 0, bytes.length);
    }
    expect(collector.malformed).toBe(1);
    expect(collector.examples[0]).toMatchObject({ line: 4, reason: 'bad time' });
    expect(collector.clientNames).toEqual(['203.0.113.1', '203.0.113.2', '2001:db8::1']);
    expect(Array.from(sortByTime(collector.times, collector.count))).toEqual([0, 2, 1, 3]);
  });
});
