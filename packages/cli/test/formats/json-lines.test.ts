// The JSON-lines format (src/formats/json-lines.ts): Caddy's and nginx's lines, the fields'
// detection, time formats, keys, each reason of a malformed line, and JSON.parse as the reference
// of the structure check and of where fields are found.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeJsonStringBody, decodeKeyBytes } from '../../src/formats/format.js';
import { JsonLinesFormat, MAX_JSON_DEPTH, type JsonLinesOptions } from '../../src/formats/json-lines.js';
import { sortByTime } from '../../src/order.js';
import { RequestCollector } from '../../src/request-collector.js';

/** A Caddy access-log line (Caddy 2.7+: client_ip next to remote_ip), request headers included. */
const caddy = (ts: string, clientIp: string, remoteIp = '198.51.100.23'): string =>
  `{"level":"info","ts":${ts},"logger":"http.log.access.log0","msg":"handled request",` +
  `"request":{"remote_ip":"${remoteIp}","remote_port":"51234","client_ip":"${clientIp}","proto":"HTTP/2.0",` +
  `"method":"GET","host":"example.com","uri":"/api/v1/items?page=2","headers":{"Accept":["application/json"],` +
  `"User-Agent":["Mozilla/5.0 (X11; Linux x86_64; rv:123.0) Gecko/20100101 Firefox/123.0"],"Cookie":["REDACTED"]},` +
  `"tls":{"resumed":false,"version":772,"cipher_suite":4865,"proto":"h2","server_name":"example.com"}},` +
  `"bytes_read":0,"user_id":"","duration":0.001234567,"size":5123,"status":200,` +
  `"resp_headers":{"Server":["Caddy"],"Alt-Svc":["h3=\\":443\\"; ma=2592000"]}}`;

/** An nginx `log_format … escape=json` line. */
const nginx = (time: string, addr: string, msec = '1710079327.123'): string =>
  `{"time_iso8601":"${time}","msec":"${msec}","remote_addr":"${addr}","remote_user":"",` +
  `"request":"GET /search?q=%22rate%22 HTTP/1.1","status":200,"body_bytes_sent":612,"request_time":0.004,` +
  `"http_referer":"","http_user_agent":"curl/8.5.0 \\"quoted\\""}`;

interface Parsed {
  ok: boolean;
  timeMs: number;
  key: string;
  reason: string;
}

function parseWith(format: JsonLinesFormat, line: string): Parsed {
  const bytes = Buffer.from(line, 'utf8');
  const ok = format.parse(bytes, 0, bytes.length);
  const key = !ok
    ? ''
    : format.keyEscaped
      ? decodeJsonStringBody(bytes, format.keyStart, format.keyEnd)
      : decodeKeyBytes(bytes, format.keyStart, format.keyEnd);
  return { ok, timeMs: format.timeMs, key, reason: format.reason };
}

const parse = (line: string, options?: JsonLinesOptions): Parsed => parseWith(new JsonLinesFormat(options), line);

describe('JsonLinesFormat: Caddy', () => {
  it('detects ts (epoch seconds, fraction floored to the ms) and request.client_ip', () => {
    const format = new JsonLinesFormat();
    expect(format.timeField).toBeUndefined();
    expect(format.keyField).toBeUndefined();
    const result = parseWith(format, caddy('1710079327.1239876', '203.0.113.7'));
    expect(result).toEqual({ ok: true, timeMs: 1710079327123, key: '203.0.113.7', reason: 'none' });
    expect(format.timeField).toBe('ts');
    expect(format.keyField).toBe('request.client_ip');
    expect(format.timeFormat).toBe('auto');
    expect(format.keyLabel).toBe('JSON field request.client_ip');
  });

  it('falls back on request.remote_ip for a Caddy before 2.7 (no client_ip)', () => {
    const line = caddy('1710079327.5', '203.0.113.7').replace('"client_ip":"203.0.113.7",', '');
    const format = new JsonLinesFormat();
    expect(parseWith(format, line)).toMatchObject({ ok: true, key: '198.51.100.23', timeMs: 1710079327500 });
    expect(format.keyField).toBe('request.remote_ip');
  });

  it('keeps the detected fields: a later line without them is malformed, naming the field', () => {
    const format = new JsonLinesFormat();
    expect(parseWith(format, caddy('1710079327', '203.0.113.7')).ok).toBe(true);
    const noClient = caddy('1710079328', '203.0.113.7').replace('"client_ip":"203.0.113.7",', '');
    expect(parseWith(format, noClient)).toMatchObject({ ok: false, reason: 'no field request.client_ip' });
    expect(parseWith(format, caddy('"yesterday"', '203.0.113.7'))).toMatchObject({ ok: false, reason: 'bad time in ts' });
  });

  it('reads an IPv6 client and an ISO ts (time_format iso8601)', () => {
    expect(parse(caddy('"2024-03-10T15:02:07.25+01:00"', '2001:db8::7'))).toMatchObject({
      ok: true,
      key: '2001:db8::7',
      timeMs: Date.UTC(2024, 2, 10, 14, 2, 7, 250),
    });
  });
});

describe('JsonLinesFormat: nginx escape=json', () => {
  it('detects msec (finer than time_iso8601) and remote_addr', () => {
    const format = new JsonLinesFormat();
    expect(parseWith(format, nginx('2024-03-10T15:02:07+01:00', '192.0.2.10'))).toMatchObject({
      ok: true,
      timeMs: 1710079327123,
      key: '192.0.2.10',
    });
    expect(format.timeField).toBe('msec');
    expect(format.keyField).toBe('remote_addr');
  });

  it('detects time_iso8601 when there is no msec', () => {
    const line = nginx('2024-03-10T15:02:07+01:00', '192.0.2.10').replace('"msec":"1710079327.123",', '');
    const format = new JsonLinesFormat();
    expect(parseWith(format, line)).toMatchObject({ ok: true, timeMs: Date.UTC(2024, 2, 10, 14, 2, 7) });
    expect(format.timeField).toBe('time_iso8601');
  });

  it('passes over a candidate that holds no time (a time in $time_local) for the next one', () => {
    const line = '{"time":"10/Mar/2024:15:02:07 +0100","timestamp":"2024-03-10T14:02:07Z","ip":"192.0.2.1"}';
    const format = new JsonLinesFormat();
    expect(parseWith(format, line)).toMatchObject({ ok: true, timeMs: Date.UTC(2024, 2, 10, 14, 2, 7), key: '192.0.2.1' });
    expect(format.timeField).toBe('timestamp');
    expect(format.keyField).toBe('ip');
  });

  it('until a line lets the fields be detected, lines are malformed and detection tries the next', () => {
    const format = new JsonLinesFormat();
    expect(parseWith(format, '{"remote_addr":"192.0.2.1"}')).toMatchObject({ ok: false, reason: 'no time field among the defaults' });
    expect(parseWith(format, '{"ts":1710079327}')).toMatchObject({ ok: false, reason: 'no key field among the defaults' });
    expect(parseWith(format, '{"ts":1710079327')).toMatchObject({ ok: false, reason: 'unterminated JSON' });
    expect(format.timeField).toBeUndefined();
    expect(format.keyLabel).toBe('JSON field (not yet detected)');
    expect(parseWith(format, '{"ts":1710079327,"client_ip":"192.0.2.1"}')).toMatchObject({ ok: true, key: '192.0.2.1' });
    expect(format.keyField).toBe('client_ip');
  });

  it('detects only the field not given', () => {
    const format = new JsonLinesFormat({ keyField: 'remote_user' });
    expect(parseWith(format, '{"remote_user":"alice","@timestamp":"2024-03-10T14:02:07.5Z"}')).toMatchObject({
      ok: true,
      key: 'alice',
      timeMs: Date.UTC(2024, 2, 10, 14, 2, 7, 500),
    });
    expect(format.timeField).toBe('@timestamp');
    expect(format.keyField).toBe('remote_user');
  });
});

describe('JsonLinesFormat: time formats', () => {
  const at = (value: string, timeFormat?: JsonLinesOptions['timeFormat']): number => {
    const r = parse(`{"t":${value},"k":"x"}`, { timeField: 't', keyField: 'k', timeFormat });
    return r.ok ? r.timeMs : NaN;
  };

  it('auto: ISO strings; numbers and numeric strings by magnitude (below 1e11: seconds)', () => {
    expect(at('"2024-03-10T14:02:07Z"')).toBe(Date.UTC(2024, 2, 10, 14, 2, 7));
    expect(at('1710079327')).toBe(1710079327000);
    expect(at('1710079327.5')).toBe(1710079327500);
    expect(at('"1710079327.123456"')).toBe(1710079327123);
    expect(at('99999999999')).toBe(99999999999000); // just below 1e11: seconds (year 5138)
    expect(at('100000000000')).toBe(100000000000); // 1e11: milliseconds (1973)
    expect(at('1710079327123')).toBe(1710079327123);
    expect(at('1710079327123.9')).toBe(1710079327123);
    expect(at('1.710079327e9')).toBe(1710079327000);
    expect(at('0')).toBe(0);
    expect(at('-1.5')).toBe(-1500);
    expect(at('-0.0001')).toBe(-1);
  });

  it('epoch-s, epoch-ms and iso8601 take what they say, and refuse the rest', () => {
    expect(at('1710079327123', 'epoch-s')).toBeNaN(); // year 56,000: out of range
    expect(at('1710079327', 'epoch-ms')).toBe(1710079327);
    expect(at('"1710079327.9"', 'epoch-ms')).toBe(1710079327);
    expect(at('1710079327.0019', 'epoch-s')).toBe(1710079327001);
    expect(at('"2024-03-10T14:02:07Z"', 'iso8601')).toBe(Date.UTC(2024, 2, 10, 14, 2, 7));
    expect(at('1710079327', 'iso8601')).toBeNaN();
    expect(at('"2024-03-10T14:02:07Z"', 'epoch-s')).toBeNaN();
  });

  it.each([
    ['null', 'null'],
    ['true', 'true'],
    ['an object', '{"s":1}'],
    ['an array', '[1710079327]'],
    ['an empty string', '""'],
    ['a time without a zone', '"2024-03-10T14:02:07"'],
    ['an escaped ISO string', '"2024-03-10T14:02:07\\u005a"'],
    ['a numeric string with junk', '"1710079327s"'],
    ['a numeric string with a bare dot', '"1710079327."'],
    ['beyond the year 9999', '"253402300800000"'],
    ['before the year 0000', '-62167219200001'],
  ])('a time that is %s is a bad time', (_name, value) => {
    expect(parse(`{"t":${value},"k":"x"}`, { timeField: 't', keyField: 'k' })).toMatchObject({ ok: false, reason: 'bad time in t' });
  });
});

describe('JsonLinesFormat: keys', () => {
  const key = (value: string): Parsed => parse(`{"t":1710079327,"k":${value}}`, { timeField: 't', keyField: 'k' });

  it('a string: its bytes, escapes decoded (keyEscaped); a number: its literal bytes', () => {
    expect(key('"203.0.113.7"').key).toBe('203.0.113.7');
    expect(key('"caf\\u00e9 \\"x\\" \\\\ \\/"').key).toBe('café "x" \\ /');
    expect(key('"h\\u00f4te"').key).toBe(key('"hôte"').key);
    expect(key('42').key).toBe('42');
    expect(key('1.0').key).toBe('1.0');
    expect(key('-1e3').key).toBe('-1e3');
  });

  it('sets keyEscaped only when the string holds an escape', () => {
    const format = new JsonLinesFormat({ timeField: 't', keyField: 'k' });
    const bytes = Buffer.from('{"t":1,"k":"a\\u0062"}\n{"t":1,"k":"ab"}');
    expect(format.parse(bytes, 0, 21)).toBe(true);
    expect(format.keyEscaped).toBe(true);
    expect(bytes.toString('latin1', format.keyStart, format.keyEnd)).toBe('a\\u0062');
    expect(format.parse(bytes, 22, bytes.length)).toBe(true);
    expect(format.keyEscaped).toBe(false);
  });

  it.each([
    ['null', 'null', 'k is not a string or number'],
    ['false', 'false', 'k is not a string or number'],
    ['an object', '{"ip":"192.0.2.1"}', 'k is not a string or number'],
    ['an array', '["192.0.2.1"]', 'k is not a string or number'],
    ['empty', '""', 'empty k'],
  ])('a key that is %s is no key', (_name, value, reason) => {
    expect(key(value)).toMatchObject({ ok: false, reason });
  });

  it('distinct key bytes are distinct clients; escapes of the same text are one (collector)', () => {
    const collector = new RequestCollector(5, new JsonLinesFormat({ timeField: 't', keyField: 'k' }));
    const lines = ['"a"', '"A"', '"\\u0041"', '"a "', '"\\u00e9"', '"é"', '7', '"7"', '7.0'];
    for (const value of lines) {
      const bytes = Buffer.from(`{"t":1710079327,"k":${value}}`);
      collector.line(bytes, 0, bytes.length);
    }
    expect(collector.malformed).toBe(0);
    expect(collector.clientNames).toEqual(['a', 'A', 'a ', 'é', '7', '7.0']);
  });
});

describe('JsonLinesFormat: paths', () => {
  it('follows nested objects, takes the last of duplicate keys, never goes through arrays', () => {
    const opts = { timeField: 'a.t', keyField: 'a.b.k' };
    expect(parse('{"a":{"t":1,"b":{"k":"x"}}}', opts)).toMatchObject({ ok: true, timeMs: 1000, key: 'x' });
    expect(parse('{"a":{"t":1,"b":{"k":"x","k":"y"}}}', opts)).toMatchObject({ ok: true, key: 'y' });
    // JSON.parse keeps the last "a": its b has no k.
    expect(parse('{"a":{"t":1,"b":{"k":"x"}},"a":{"t":2,"b":{}}}', opts)).toMatchObject({ ok: false, reason: 'no field a.b.k' });
    expect(parse('{"a":{"t":1,"b":{"k":"x"}},"a":{"t":2,"b":{"k":"z"}}}', opts)).toMatchObject({ ok: true, timeMs: 2000, key: 'z' });
    expect(parse('{"a":[{"t":1,"b":{"k":"x"}}]}', opts)).toMatchObject({ ok: false, reason: 'no field a.t' });
    expect(parse('{"a":"t","t":1,"b":{"k":"x"}}', opts)).toMatchObject({ ok: false, reason: 'no field a.t' });
    // The same names deeper or elsewhere are other fields.
    expect(parse('{"x":{"a":{"t":1,"b":{"k":"x"}}},"a":{"t":3,"b":{"k":"w"}}}', opts)).toMatchObject({ ok: true, timeMs: 3000, key: 'w' });
    // A key written with escapes is not the field.
    expect(parse('{"a":{"\\u0074":1,"b":{"k":"x"}}}', opts)).toMatchObject({ ok: false, reason: 'no field a.t' });
  });
});

describe('JsonLinesFormat: malformed lines', () => {
  const opts = { timeField: 't', keyField: 'k' };
  it.each([
    ['not a JSON object', '["t",1]'],
    ['not a JSON object', '"t"'],
    ['not a JSON object', '   '],
    ['not a JSON object', '192.0.2.1 - - [10/Mar/2024:14:02:07 +0000] "GET / HTTP/1.1" 200 1'],
    ['unterminated JSON', '{"t":1,"k":"x"'],
    ['unterminated JSON', '{"t":1,"k":"x'],
    ['unterminated JSON', '{"t":1,"k":"x\\'],
    ['unterminated JSON', '{"t":1,"k":"\\u00'],
    ['unterminated JSON', '{"t":1,"k":"x","n":nul'],
    ['unterminated JSON', '{"t":1,"k":"x","n":-'],
    ['unterminated JSON', '{"t":1,"k":"x","n":[1,2'],
    ['bad JSON syntax', '{"t":1,"k":"x",}'],
    ['bad JSON syntax', '{"t":1 "k":"x"}'],
    ['bad JSON syntax', '{"t":1,"k":"x","n":01}'],
    ['bad JSON syntax', '{"t":1,"k":"x","n":1.}'],
    ['bad JSON syntax', '{"t":1,"k":"x","n":.5}'],
    ['bad JSON syntax', '{"t":1,"k":"x","n":1e}'],
    ['bad JSON syntax', '{"t":1,"k":"x","n":+1}'],
    ['bad JSON syntax', '{"t":1,"k":"x","n":nan}'],
    ['bad JSON syntax', '{"t":1,"k":"x","n":[1,]}'],
    ['bad JSON syntax', '{"t":1,"k":"x","n":[1}'],
    ['bad JSON syntax', "{'t':1,'k':'x'}"],
    ['bad JSON syntax', '{t:1,"k":"x"}'],
    ['bad escape in a string', '{"t":1,"k":"\\x41"}'],
    ['bad escape in a string', '{"t":1,"k":"\\u00g1"}'],
    ['control character in a string', '{"t":1,"k":"a\tb"}'],
    ['control character in a string', '{"t":1,"k":"x","ua":"a\u0001b"}'],
    ['text after the object', '{"t":1,"k":"x"}{"t":2,"k":"y"}'],
    ['text after the object', '{"t":1,"k":"x"} x'],
    ['nested too deeply', `{"t":1,"k":"x","n":${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}}`],
    ['no field t', '{"k":"x"}'],
    ['no field k', '{"t":1}'],
  ])('%s: %j', (reason, line) => {
    expect(parse(line, opts)).toMatchObject({ ok: false, reason });
  });

  it('accepts whitespace around tokens, a trailing \\r, and nesting up to the limit', () => {
    expect(parse(' \t{ "t" : 1 , "k" : "x" , "n" : [ ] , "o" : { } } \r', opts)).toMatchObject({ ok: true, key: 'x' });
    const deep = `{"t":1,"k":"x","n":${'['.repeat(MAX_JSON_DEPTH - 1)}${']'.repeat(MAX_JSON_DEPTH - 1)}}`;
    expect(parse(deep, opts).ok).toBe(true);
  });

  it('never reads past the end it is given', () => {
    const format = new JsonLinesFormat(opts);
    const line = '{"t":1710079327,"k":"192.0.2.1","ua":"x"}';
    const chunk = Buffer.from(`${line}\n${line}\n`);
    for (let end = 0; end < line.length; end++) expect(format.parse(chunk, 0, end)).toBe(false);
    expect(format.parse(chunk, 0, line.length)).toBe(true);
    expect(format.parse(chunk, line.length + 1, 2 * line.length + 1)).toBe(true);
  });
});

describe('JsonLinesFormat: mixed zones and out-of-order times, through the collector', () => {
  it('orders ISO times of several offsets by their UTC instant, ties in file order', () => {
    const format = new JsonLinesFormat();
    const collector = new RequestCollector(5, format);
    const lines = [
      nginx('2024-03-10T16:02:09+02:00', '192.0.2.1', '').replace('"msec":"",', ''), // 14:02:09Z
      nginx('2024-03-10T08:32:07-05:30', '192.0.2.2', '').replace('"msec":"",', ''), // 14:02:07Z
      nginx('2024-03-10T14:02:08Z', '192.0.2.3', '').replace('"msec":"",', ''), // 14:02:08Z
      nginx('2024-03-10T15:02:07+01:00', '192.0.2.4', '').replace('"msec":"",', ''), // 14:02:07Z, tie
      nginx('2024-03-10T14:02:07.999-00:00', '192.0.2.5', '').replace('"msec":"",', ''), // 14:02:07.999Z
    ];
    const text = Buffer.from(lines.join('\n'));
    let start = 0;
    for (;;) {
      const nl = text.indexOf(10, start);
      const end = nl === -1 ? text.length : nl;
      collector.line(text, start, end);
      if (nl === -1) break;
      start = nl + 1;
    }
    expect(format.timeField).toBe('time_iso8601');
    expect(collector.malformed).toBe(0);
    const order = Array.from(sortByTime(collector.times, collector.count));
    expect(order.map((i) => collector.clientNames[collector.clientOf[i] as number])).toEqual([
      '192.0.2.2',
      '192.0.2.4',
      '192.0.2.5',
      '192.0.2.3',
      '192.0.2.1',
    ]);
    expect(Array.from(order, (i) => collector.times[i])).toEqual([
      Date.UTC(2024, 2, 10, 14, 2, 7),
      Date.UTC(2024, 2, 10, 14, 2, 7),
      Date.UTC(2024, 2, 10, 14, 2, 7, 999),
      Date.UTC(2024, 2, 10, 14, 2, 8),
      Date.UTC(2024, 2, 10, 14, 2, 9),
    ]);
  });

  it('orders Caddy lines written out of order, malformed ones counted with their reason', () => {
    const collector = new RequestCollector(5, new JsonLinesFormat());
    const lines = [
      caddy('1710079330.5', '203.0.113.1'),
      caddy('1710079327.25', '203.0.113.2'),
      caddy('1710079330.5', '203.0.113.3'),
      caddy('1710079327.25', '203.0.113.2').slice(0, 200), // cut short
      caddy('1710079320', '203.0.113.4'),
    ];
    for (const line of lines) {
      const bytes = Buffer.from(line);
      collector.line(bytes, 0, bytes.length);
    }
    expect(collector.malformed).toBe(1);
    expect(collector.examples[0]).toMatchObject({ line: 4, reason: 'unterminated JSON' });
    const order = Array.from(sortByTime(collector.times, collector.count));
    expect(order).toEqual([3, 1, 0, 2]);
  });
});

describe('JsonLinesFormat options', () => {
  it.each([
    [{ timeField: '' }, RangeError, /`timeField`/],
    [{ timeField: 'a..b' }, RangeError, /`timeField`.*"a\.\.b"/],
    [{ keyField: '.a' }, RangeError, /`keyField`/],
    [{ keyField: 5 }, TypeError, /`keyField`.*`5` \(number\)/],
    [{ timeFormat: 'epoch' }, RangeError, /`timeFormat` to be one of "auto", "iso8601", "epoch-s", "epoch-ms"/],
    [{ timeFormat: 1 }, TypeError, /`timeFormat`/],
    [{ timefield: 'ts' }, TypeError, /Unknown option "timefield" in JsonLinesFormat options: expected one of `timeField`, `timeFormat`, `keyField`/],
  ])('refuses %j', (options, type, message) => {
    expect(() => new JsonLinesFormat(options as JsonLinesOptions)).toThrow(type);
    expect(() => new JsonLinesFormat(options as JsonLinesOptions)).toThrow(message);
  });
});

// The reference: JSON.parse, on lines made from fast-check's JSON values.
describe('JsonLinesFormat against JSON.parse (properties)', () => {
  const opts = { timeField: 'meta.t', keyField: 'k' };
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  /** JSON.parse's verdict: an object, or not. */
  const parsesToObject = (line: string): boolean => {
    try {
      return isObject(JSON.parse(line));
    } catch {
      return false;
    }
  };

  /** An object with random members, and maybe the two fields (the time as epoch seconds, whole). */
  const line = fc
    .tuple(
      fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 6 }),
      fc.option(fc.integer({ min: 0, max: 99_999_999_999 }), { nil: undefined }),
      fc.option(fc.oneof(fc.string({ minLength: 1, maxLength: 8 }), fc.integer()), { nil: undefined }),
      fc.boolean(),
    )
    .map(([rest, t, k, fieldsFirst]) => {
      const fields: Record<string, unknown> = {};
      if (t !== undefined) fields.meta = { t };
      if (k !== undefined) fields.k = k;
      return JSON.stringify(fieldsFirst ? { ...fields, ...rest } : { ...rest, ...fields });
    });

  it('finds the fields JSON.parse finds, on every object line', () => {
    const format = new JsonLinesFormat(opts);
    fc.assert(
      fc.property(line, (text) => {
        const model = JSON.parse(text) as Record<string, unknown>;
        const meta = model.meta;
        const t = isObject(meta) ? meta.t : undefined;
        const k = model.k;
        const result = parseWith(format, text);
        const timeOk = typeof t === 'number';
        const keyOk = (typeof k === 'string' && k !== '') || typeof k === 'number';
        expect(result.ok).toBe(timeOk && keyOk);
        if (!result.ok) {
          expect(result.reason).toMatch(timeOk ? /k/ : /meta\.t/);
          return;
        }
        expect(result.timeMs).toBe((t as number) * 1000);
        expect(result.key).toBe(typeof k === 'number' ? JSON.stringify(k) : k);
      }),
      { numRuns: 3000 },
    );
  });

  it('accepts a mutated line exactly when JSON.parse returns an object from it', () => {
    // The fields are always there, so that only the structure decides.
    const valid = line.map((text) => `{"meta":{"t":1},"k":"x",${text.slice(1)}`.replace(',}', '}'));
    const mutation = fc.tuple(
      valid,
      fc.array(
        fc.tuple(fc.nat(), fc.constantFrom('', '{', '}', '[', ']', ',', ':', '"', '\\', ' ', '\t', '\u0001', '0', '-', '.', 'e', 'a', 'n', 'u', '\u00e9')),
        { minLength: 1, maxLength: 3 },
      ),
    );
    const format = new JsonLinesFormat(opts);
    let accepted = 0;
    let refused = 0;
    fc.assert(
      fc.property(mutation, ([text, edits]) => {
        let s = text;
        for (const [at, char] of edits) {
          const i = at % (s.length + 1);
          // Even positions replace (or, with '', delete) a character; odd ones insert.
          s = s.slice(0, i) + char + s.slice(i + (char === '' || at % 2 === 0 ? 1 : 0));
        }
        const ours = parseWith(format, s);
        const reference = parsesToObject(s);
        if (reference) {
          // An object: the only reasons left are the fields (a mutation may have hit them).
          if (!ours.ok) expect(ours.reason).toMatch(/^(no field|bad time in|k is not|empty k)/);
        } else {
          expect(ours.ok).toBe(false);
          expect(ours.reason).not.toMatch(/^(no field|bad time in|k is not|empty k)/);
        }
        if (ours.ok) accepted++;
        else refused++;
      }),
      { numRuns: 5000 },
    );
    // Both outcomes occur often enough for the comparison to mean something.
    expect(accepted).toBeGreaterThan(300);
    expect(refused).toBeGreaterThan(300);
  });
});
