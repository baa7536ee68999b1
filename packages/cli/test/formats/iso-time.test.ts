// The ISO 8601 / RFC 3339 timestamp parser (src/formats/iso-time.ts): what it accepts, what
// it refuses, and Date.parse as its reference model.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseIsoTime } from '../../src/formats/iso-time.js';

const iso = (text: string): number => {
  const bytes = Buffer.from(text, 'latin1');
  return parseIsoTime(bytes, 0, bytes.length);
};
const two = (n: number): string => String(n).padStart(2, '0');

describe('parseIsoTime', () => {
  it('reads Z, offsets with and without a colon, into UTC milliseconds', () => {
    const utc = Date.UTC(2024, 2, 10, 14, 2, 7);
    expect(iso('2024-03-10T14:02:07Z')).toBe(utc);
    expect(iso('2024-03-10T14:02:07+00:00')).toBe(utc);
    expect(iso('2024-03-10T14:02:07-00:00')).toBe(utc);
    expect(iso('2024-03-10T16:02:07+02:00')).toBe(utc);
    expect(iso('2024-03-10T08:32:07-05:30')).toBe(utc);
    expect(iso('2024-03-10T08:32:07-0530')).toBe(utc);
    expect(iso('2024-03-11T14:01:07+23:59')).toBe(utc);
  });

  it('accepts lowercase t and z and a space for T', () => {
    const utc = Date.UTC(2024, 2, 10, 14, 2, 7);
    expect(iso('2024-03-10t14:02:07z')).toBe(utc);
    expect(iso('2024-03-10 14:02:07Z')).toBe(utc);
  });

  it('floors a fraction of any length to the millisecond', () => {
    const utc = Date.UTC(2018, 6, 2, 22, 22, 48);
    expect(iso('2018-07-02T22:22:48.364000Z')).toBe(utc + 364);
    expect(iso('2018-07-02T22:22:48.1Z')).toBe(utc + 100);
    expect(iso('2018-07-02T22:22:48.12Z')).toBe(utc + 120);
    expect(iso('2018-07-02T22:22:48.9999999Z')).toBe(utc + 999);
    expect(iso('2018-07-02T22:22:48.0001+01:00')).toBe(utc - 3_600_000);
  });

  it('crosses day, month and year boundaries through the zone; leap days and the leap second', () => {
    expect(iso('2023-12-31T17:00:03-07:00')).toBe(Date.UTC(2024, 0, 1, 0, 0, 3));
    expect(iso('2024-02-29T12:00:00Z')).toBe(Date.UTC(2024, 1, 29, 12));
    expect(iso('2000-02-29T12:00:00Z')).toBe(Date.UTC(2000, 1, 29, 12));
    expect(iso('2016-12-31T23:59:60Z')).toBe(Date.UTC(2017, 0, 1));
    expect(iso('0000-01-01T00:00:00Z')).toBe(-62167219200000);
    expect(iso('9999-12-31T23:59:59.999Z')).toBe(253402300799999);
  });

  it.each([
    ['no zone (local time is ambiguous)', '2024-03-10T14:02:07'],
    ['no zone, with a fraction', '2024-03-10T14:02:07.123'],
    ['a date alone', '2024-03-10'],
    ['no seconds', '2024-03-10T14:02Z'],
    ['hour 24', '2024-03-10T24:00:00Z'],
    ['minute 60', '2024-03-10T14:60:00Z'],
    ['second 61', '2024-03-10T14:02:61Z'],
    ['month 13', '2024-13-10T14:02:07Z'],
    ['month 00', '2024-00-10T14:02:07Z'],
    ['day 00', '2024-03-00T14:02:07Z'],
    ['31 April', '2024-04-31T14:02:07Z'],
    ['29 February of a common year', '2023-02-29T14:02:07Z'],
    ['29 February 1900', '1900-02-29T14:02:07Z'],
    ['a dot without digits', '2024-03-10T14:02:07.Z'],
    ['a comma fraction', '2024-03-10T14:02:07,5Z'],
    ['zone hour 24', '2024-03-10T14:02:07+24:00'],
    ['zone minute 60', '2024-03-10T14:02:07+01:60'],
    ['a short zone', '2024-03-10T14:02:07+01'],
    ['a zone with a letter', '2024-03-10T14:02:07+0a:00'],
    ['another zone letter', '2024-03-10T14:02:07A'],
    ['text after Z', '2024-03-10T14:02:07Zx'],
    ['text after the offset', '2024-03-10T14:02:07+01:00 '],
    ['a leading space', ' 2024-03-10T14:02:07Z'],
    ['an expanded year', '+02024-03-10T14:02:07Z'],
    ['slashes', '2024/03/10T14:02:07Z'],
    ['another separator', '2024-03-10_14:02:07Z'],
    ['a letter in the year', '2O24-03-10T14:02:07Z'],
    ['empty', ''],
  ])('refuses %s: %j', (_name, text) => {
    expect(iso(text)).toBeNaN();
  });

  it('reads only bytes[start, end): the same timestamp inside a longer buffer', () => {
    const bytes = Buffer.from('xx2024-03-10T14:02:07Z+01:00yy');
    expect(parseIsoTime(bytes, 2, 22)).toBe(Date.UTC(2024, 2, 10, 14, 2, 7));
    // What follows `end` does not complete a timestamp cut short.
    expect(parseIsoTime(bytes, 2, 21)).toBeNaN();
  });

  // Date.parse is the reference: equal on every valid timestamp generated.
  const timestamp = fc.record({
    year: fc.integer({ min: 0, max: 9999 }),
    month: fc.integer({ min: 1, max: 12 }),
    day: fc.integer({ min: 1, max: 31 }),
    hour: fc.integer({ min: 0, max: 23 }),
    minute: fc.integer({ min: 0, max: 59 }),
    second: fc.integer({ min: 0, max: 59 }),
    fraction: fc.option(fc.stringMatching(/^[0-9]{1,12}$/), { nil: undefined }),
    separator: fc.constantFrom('T', 't', ' '),
    zone: fc.oneof(
      fc.constantFrom('Z', 'z'),
      fc.record({ minutes: fc.integer({ min: -1439, max: 1439 }), colon: fc.boolean() }).map(({ minutes, colon }) => {
        const m = Math.abs(minutes);
        return `${minutes < 0 ? '-' : '+'}${two(Math.floor(m / 60))}${colon ? ':' : ''}${two(m % 60)}`;
      }),
    ),
  });
  // Date.parse reads the ECMAScript form (`T`, `Z`) by the standard; other forms (a space or a
  // lowercase `t`) go through V8's legacy fallback, which reads a year below 100 as 19xx or 20xx
  // (`0000-01-01 00:00:00Z` is 2000). And V8 misreads fractions of 10 digits or more
  // (`.0001000000` as 1 ms, not 0.1 ms). The reference is Date.parse of the standard spelling with
  // the fraction cut to 9 digits (which floors to the same millisecond).
  const reference = (s: string): number => {
    const standard = s.length > 10 && (s[10] === ' ' || s[10] === 't') ? `${s.slice(0, 10)}T${s.slice(11)}` : s;
    return Date.parse(standard.replace('z', 'Z').replace(/(\.[0-9]{9})[0-9]+/, '$1'));
  };
  type Timestamp = typeof timestamp extends fc.Arbitrary<infer T> ? T : never;
  const text = (t: Timestamp): string =>
    `${String(t.year).padStart(4, '0')}-${two(t.month)}-${two(t.day)}${t.separator}` +
    `${two(t.hour)}:${two(t.minute)}:${two(t.second)}${t.fraction === undefined ? '' : `.${t.fraction}`}${t.zone}`;

  it('equals Date.parse on every valid timestamp; both refuse the invalid days (property)', () => {
    fc.assert(
      fc.property(timestamp, (t) => {
        const s = text(t);
        const valid = t.day <= new Date(Date.UTC(2000 + (t.year % 400), t.month, 0)).getUTCDate();
        if (valid) {
          expect(iso(s)).toBe(reference(s));
        } else {
          // Date.parse rolls a 29–31 over into the next month; this parser refuses it.
          expect(iso(s)).toBeNaN();
        }
      }),
      { numRuns: 5000 },
    );
  });

  it('accepts only what Date.parse accepts, with the same instant (mutated timestamps, property)', () => {
    const mutated = fc
      .tuple(timestamp, fc.array(fc.tuple(fc.nat(), fc.constantFrom(...'0123456789:-+.TtZz ,x'.split(''), '')), { minLength: 1, maxLength: 3 }))
      .map(([t, edits]) => {
        let s = text(t);
        for (const [at, char] of edits) {
          const i = at % (s.length + 1);
          s = s.slice(0, i) + char + s.slice(i + (char === '' || at % 2 === 0 ? 1 : 0));
        }
        return s;
      });
    let accepted = 0;
    fc.assert(
      fc.property(mutated, (s) => {
        const ours = iso(s);
        if (Number.isNaN(ours)) return;
        accepted++;
        // Where this parser accepts, Date.parse agrees, except on the leap second it refuses.
        if (/:60(\.|[Zz+-])/.test(s)) expect(reference(s)).toBeNaN();
        else expect(ours).toBe(reference(s));
      }),
      { numRuns: 5000 },
    );
    // The mutations leave enough timestamps valid for the comparison to mean something.
    expect(accepted).toBeGreaterThan(100);
  });
});
