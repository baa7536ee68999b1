// The access-log parser (src/formats/clf.ts): what parseLogLine accepts and why it rejects,
// and the byte-level ClfFormat's bounds.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ClfFormat, malformedReason, parseLogLine } from '../src/formats/clf.js';

describe('parseLogLine', () => {
  const COMMON = '198.18.0.1 - - [17/May/2015:10:05:03 +0000] "GET /a.png HTTP/1.1" 200 203023';
  const COMBINED = `${COMMON} "http://example.com/" "Mozilla/5.0 (X11; Linux x86_64)"`;

  it('parses a Common Log Format line: the client and the time in ms (UTC)', () => {
    expect(parseLogLine(COMMON)).toEqual({
      client: '198.18.0.1',
      timeMs: Date.UTC(2015, 4, 17, 10, 5, 3),
    });
  });

  it('parses a Combined Log Format line the same way', () => {
    expect(parseLogLine(COMBINED)).toEqual(parseLogLine(COMMON));
  });

  it('applies the zone offset: UTC = local time - offset', () => {
    const at = (zone: string) =>
      parseLogLine(`h - - [17/May/2015:10:05:03 ${zone}] "GET / HTTP/1.1" 200 1`)?.timeMs;
    const utc = Date.UTC(2015, 4, 17, 10, 5, 3);
    expect(at('+0000')).toBe(utc);
    expect(at('-0000')).toBe(utc);
    expect(at('+0200')).toBe(utc - 2 * 3_600_000);
    expect(at('-0700')).toBe(utc + 7 * 3_600_000);
    expect(at('+0530')).toBe(utc - 5.5 * 3_600_000);
    expect(at('-0945')).toBe(utc + 9.75 * 3_600_000);
    expect(at('+2359')).toBe(utc - (23 * 60 + 59) * 60_000);
  });

  it('crosses day, month and year boundaries through the zone', () => {
    expect(
      parseLogLine('h - - [31/Dec/2023:17:00:03 -0700] "GET / HTTP/1.1" 200 1')?.timeMs,
    ).toBe(Date.UTC(2024, 0, 1, 0, 0, 3));
    expect(
      parseLogLine('h - - [01/Mar/2024:00:30:00 +0100] "GET / HTTP/1.1" 200 1')?.timeMs,
    ).toBe(Date.UTC(2024, 1, 29, 23, 30, 0));
  });

  it('computes the same instant as Date.UTC for every valid timestamp', () => {
    const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
    const two = (n: number) => String(n).padStart(2, '0');
    fc.assert(
      fc.property(
        fc.integer({ min: 1000, max: 9999 }),
        fc.integer({ min: 0, max: 11 }),
        fc.integer({ min: 1, max: 31 }),
        fc.integer({ min: 0, max: 23 }),
        fc.integer({ min: 0, max: 59 }),
        fc.integer({ min: 0, max: 60 }),
        fc.integer({ min: -1439, max: 1439 }),
        (year, month, day, hour, minute, second, zone) => {
          const z = Math.abs(zone);
          const stamp =
            `${two(day)}/${MONTHS[month]}/${year}:${two(hour)}:${two(minute)}:${two(second)} ` +
            `${zone < 0 ? '-' : '+'}${two(Math.floor(z / 60))}${two(z % 60)}`;
          const parsed = parseLogLine(`1.2.3.4 - - [${stamp}] "GET / HTTP/1.1" 200 5`);
          const valid = new Date(Date.UTC(year, month, day)).getUTCDate() === day;
          if (!valid) return parsed === null;
          return (
            parsed !== null &&
            parsed.timeMs === Date.UTC(year, month, day, hour, minute, second) - zone * 60_000
          );
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('accepts a leap day, a leap second, a trailing \\r, escaped quotes and extra fields', () => {
    const t = (stamp: string) => parseLogLine(`h - - [${stamp}] "GET / HTTP/1.1" 200 1`)?.timeMs;
    expect(t('29/Feb/2024:12:00:00 +0000')).toBe(Date.UTC(2024, 1, 29, 12));
    expect(t('29/Feb/2000:12:00:00 +0000')).toBe(Date.UTC(2000, 1, 29, 12));
    expect(t('31/Dec/2016:23:59:60 +0000')).toBe(Date.UTC(2017, 0, 1));
    expect(parseLogLine(`${COMMON}\r`)).toEqual(parseLogLine(COMMON));
    expect(
      parseLogLine('h - - [17/May/2015:10:05:03 +0000] "GET /\\"q\\" \\\\ HTTP/1.1" 400 -'),
    ).not.toBeNull();
    expect(parseLogLine('h - - [17/May/2015:10:05:03 +0000] "" 400 0')).not.toBeNull();
    expect(parseLogLine(`${COMMON} 0.003 upstream=1`)).not.toBeNull();
    expect(parseLogLine(`${COMMON} `)).not.toBeNull();
  });

  it('takes any non-empty first field as the client, exactly as written', () => {
    const client = (host: string) =>
      parseLogLine(`${host} - - [17/May/2015:10:05:03 +0000] "GET / HTTP/1.1" 200 1`)?.client;
    expect(client('2001:db8::1')).toBe('2001:db8::1');
    expect(client('proxy.example.com')).toBe('proxy.example.com');
    expect(client('hôte-ü')).toBe('hôte-ü');
    expect(client('x')).toBe('x');
  });

  const ok = '1.2.3.4 - - [17/May/2015:10:05:03 +0000] "GET / HTTP/1.1" 200 5';
  it.each([
    ['empty line', ''],
    ['empty line', '\r'],
    ['no client address', ` ${ok}`],
    ['no ident', '1.2.3.4'],
    ['no ident', '1.2.3.4  - [17/May/2015:10:05:03 +0000] "GET / HTTP/1.1" 200 5'],
    ['no authuser', '1.2.3.4 -  [17/May/2015:10:05:03 +0000] "GET / HTTP/1.1" 200 5'],
    ['no authuser', '1.2.3.4 -'],
    ['no [timestamp]', '1.2.3.4 - - 17/May/2015:10:05:03 +0000 "GET / HTTP/1.1" 200 5'],
    ['no [timestamp]', 'this is not a log line'],
    ['bad timestamp', '1.2.3.4 - - [17/May/2015:10:05:03 +0000 "GET / HTTP/1.1" 200 5'],
    ['bad timestamp', '1.2.3.4 - - [7/May/2015:10:05:03 +0000] "GET / HTTP/1.1" 200 5'],
    ['bad timestamp', '1.2.3.4 - - [17/May/15:10:05:03 +0000] "GET / HTTP/1.1" 200 5'],
    ['bad timestamp', '1.2.3.4 - - [17-May-2015:10:05:03 +0000] "GET / HTTP/1.1" 200 5'],
    ['bad timestamp', '1.2.3.4 - - [17/May/2015 10:05:03 +0000] "GET / HTTP/1.1" 200 5'],
    ['bad timestamp', '1.2.3.4 - - [17/May/2015:1a:05:03 +0000] "GET / HTTP/1.1" 200 5'],
    ['bad timestamp', '1.2.3.4 - - [17/May/2015:10:05:03]'],
    ['bad day', '1.2.3.4 - - [00/May/2015:10:05:03 +0000] "GET / HTTP/1.1" 200 5'],
    ['bad day', '1.2.3.4 - - [32/May/2015:10:05:03 +0000] "GET / HTTP/1.1" 200 5'],
    ['bad day', '1.2.3.4 - - [31/Apr/2015:10:05:03 +0000] "GET / HTTP/1.1" 200 5'],
    ['bad day', '1.2.3.4 - - [29/Feb/2023:10:05:03 +0000] "GET / HTTP/1.1" 200 5'],
    ['bad day', '1.2.3.4 - - [29/Feb/1900:10:05:03 +0000] "GET / HTTP/1.1" 200 5'],
    ['bad month', '1.2.3.4 - - [17/MAY/2015:10:05:03 +0000] "GET / HTTP/1.1" 200 5'],
    ['bad month', '1.2.3.4 - - [17/Mai/2015:10:05:03 +0000] "GET / HTTP/1.1" 200 5'],
    ['bad time of day', '1.2.3.4 - - [17/May/2015:24:05:03 +0000] "GET / HTTP/1.1" 200 5'],
    ['bad time of day', '1.2.3.4 - - [17/May/2015:10:60:03 +0000] "GET / HTTP/1.1" 200 5'],
    ['bad time of day', '1.2.3.4 - - [17/May/2015:10:05:61 +0000] "GET / HTTP/1.1" 200 5'],
    ['bad zone offset', '1.2.3.4 - - [17/May/2015:10:05:03 0000 ] "GET / HTTP/1.1" 200 5'],
    ['bad zone offset', '1.2.3.4 - - [17/May/2015:10:05:03 *0000] "GET / HTTP/1.1" 200 5'],
    ['bad zone offset', '1.2.3.4 - - [17/May/2015:10:05:03 +00a0] "GET / HTTP/1.1" 200 5'],
    ['bad zone offset', '1.2.3.4 - - [17/May/2015:10:05:03 +0060] "GET / HTTP/1.1" 200 5'],
    ['bad zone offset', '1.2.3.4 - - [17/May/2015:10:05:03 +2400] "GET / HTTP/1.1" 200 5'],
    ['bad timestamp', '1.2.3.4 - - [17/May/2015:10:05:03 +000] "GET / HTTP/1.1" 200 5'],
    ['no quoted request', '1.2.3.4 - - [17/May/2015:10:05:03 +0000] GET / HTTP/1.1 200 5'],
    ['no quoted request', '1.2.3.4 - - [17/May/2015:10:05:03 +0000]'],
    ['unterminated request', '1.2.3.4 - - [17/May/2015:10:05:03 +0000] "GET / HTTP/1.1 200 5'],
    ['unterminated request', '1.2.3.4 - - [17/May/2015:10:05:03 +0000] "GET /\\" 200 5'],
    ['bad status', '1.2.3.4 - - [17/May/2015:10:05:03 +0000] "GET / HTTP/1.1" 20 5'],
    ['bad status', '1.2.3.4 - - [17/May/2015:10:05:03 +0000] "GET / HTTP/1.1" 2000 5'],
    ['bad status', '1.2.3.4 - - [17/May/2015:10:05:03 +0000] "GET / HTTP/1.1" OK! 5'],
    ['bad status', '1.2.3.4 - - [17/May/2015:10:05:03 +0000] "GET / HTTP/1.1"'],
    ['bad bytes', '1.2.3.4 - - [17/May/2015:10:05:03 +0000] "GET / HTTP/1.1" 200'],
    ['bad bytes', '1.2.3.4 - - [17/May/2015:10:05:03 +0000] "GET / HTTP/1.1" 200 '],
    ['bad bytes', '1.2.3.4 - - [17/May/2015:10:05:03 +0000] "GET / HTTP/1.1" 200 12a'],
    ['bad bytes', '1.2.3.4 - - [17/May/2015:10:05:03 +0000] "GET / HTTP/1.1" 200 --'],
    ['bad bytes', '1.2.3.4 - - [17/May/2015:10:05:03 +0000] "GET / HTTP/1.1" 200 x'],
  ])('rejects a line with %s: %j', (reason, line) => {
    expect(parseLogLine(line)).toBeNull();
    expect(malformedReason(line)).toBe(reason);
    expect(malformedReason(ok)).toBeNull();
  });

  it('never reads past the end it is given (the rest of the chunk)', () => {
    const parser = new ClfFormat();
    const chunk = Buffer.from(`${ok}\n${ok}\n`);
    // Cut inside the first line: what follows the cut must not complete it.
    for (let end = 0; end < ok.length - 1; end++) {
      expect(parser.parse(chunk, 0, end)).toBe(false);
    }
    expect(parser.parse(chunk, 0, ok.length)).toBe(true);
    expect(parser.parse(chunk, ok.length + 1, 2 * ok.length + 1)).toBe(true);
    // An unterminated request must not find its quote on the next line.
    const open = Buffer.from('1.2.3.4 - - [17/May/2015:10:05:03 +0000] "GET /\n" 200 5\n');
    expect(parser.parse(open, 0, open.indexOf(10))).toBe(false);
  });
});
