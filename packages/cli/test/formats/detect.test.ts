// Choosing a format (src/formats/detect.ts): detectFormat on first lines, createFormat and its
// option errors.
import { describe, expect, it } from 'vitest';
import { AlbFormat } from '../../src/formats/alb.js';
import { ClfFormat } from '../../src/formats/clf.js';
import { createFormat, detectFormat, type FormatOptions } from '../../src/formats/detect.js';
import { JsonLinesFormat } from '../../src/formats/json-lines.js';
import type { FormatName } from '../../src/formats/format.js';
import { FORMATS, FORMAT_NAMES, PROBE_ORDER } from '../../src/formats/registry.js';

const detect = (line: string): FormatName | undefined => {
  const bytes = Buffer.from(line);
  return detectFormat(bytes, 0, bytes.length);
};

const ALB =
  'h2 2024-03-10T14:02:07.186641Z app/my-loadbalancer/50dc6c495c0c9188 198.51.100.7:48160 10.0.0.66:9000 0.000 0.002 0.000 200 200 5 257 ' +
  '"GET https://example.com:443/ HTTP/2.0" "curl/8.5.0" ECDHE-RSA-AES128-GCM-SHA256 TLSv1.2 arn:aws:elasticloadbalancing:us-east-2:123456789012:targetgroup/t/73e2d6bc24d8a067 ' +
  '"Root=1-58337327-72bd00b0343d75b906739c42" "-" "-" 1 2024-03-10T14:02:06.364000Z "forward" "-" "-" "10.0.0.66:9000" "200" "-" "-"';
const CLF = '192.0.2.1 - - [10/Mar/2024:14:02:07 +0000] "GET / HTTP/1.1" 200 612 "-" "curl/8.5.0"';

describe('detectFormat', () => {
  it.each([
    ['json', '{"ts":1710079327.1,"request":{"client_ip":"192.0.2.1"}}'],
    ['json', '  \t{"remote_addr":"192.0.2.1"}\r'],
    ['json', '{not json at all'],
    ['alb', ALB],
    ['alb', ALB.replace('h2 ', 'http ')],
    ['clf', CLF],
    ['clf', `${CLF}\r`],
    [undefined, ''],
    [undefined, 'hello world'],
    [undefined, '2024-03-10T14:02:07Z GET /'],
    [undefined, 'h2 2024-03-10T14:02:07 no zone'],
    [undefined, '[1,2,3]'],
    [undefined, '192.0.2.1 - - [10/Mar/2024:14:02:07 +0000] "GET / HTTP/1.1" 200'],
  ])('%s: %j', (expected, line) => {
    expect(detect(line)).toBe(expected);
  });

  it('reads nothing at or after end', () => {
    const bytes = Buffer.from(`h2 2024-03-10T14:02:07Z\n${CLF}`);
    expect(detectFormat(bytes, 0, 'h2 2024-03-10T14:02'.length)).toBeUndefined();
    expect(detectFormat(bytes, 24, bytes.length)).toBe('clf');
  });
});

describe('createFormat', () => {
  it('builds each format with its options', () => {
    expect(createFormat('clf')).toBeInstanceOf(ClfFormat);
    expect(createFormat('clf', { key: { kind: 'user' } }).keyLabel).toBe('authenticated user (%u)');
    expect(createFormat('alb')).toBeInstanceOf(AlbFormat);
    const json = createFormat('json', { key: { kind: 'field', path: 'request.remote_ip' }, timeField: 'ts', timeFormat: 'epoch-s' });
    expect(json.keyLabel).toBe('JSON field request.remote_ip');
    if (!(json instanceof JsonLinesFormat)) throw new Error('not a JsonLinesFormat');
    expect(json.timeField).toBe('ts');
    expect(json.timeFormat).toBe('epoch-s');
  });

  it.each([
    ['xml', {}, RangeError, /Expected `format` to be one of "clf", "json", "alb", got `"xml"` \(string\)/],
    ['toString', {}, RangeError, /`format`/],
    [3, {}, TypeError, /`format`/],
    ['clf', { key: { kind: 'field', path: 'a' } }, RangeError, /^`--key field:PATH` is for a JSON-lines log; this is a Common\/Combined Log Format log \(keys: ip, ip\/N, user\)$/],
    ['clf', { key: 1 }, TypeError, /^Expected `--key` to be a key choice/],
    ['clf', { key: { kind: 'host' } }, TypeError, /`--key`/],
    ['clf', { timeField: 'ts' }, RangeError, /^`--time-field` and `--time-format` are for a JSON-lines log; this is a Common\/Combined Log Format log$/],
    ['clf', { timeFormat: 'auto' }, RangeError, /are for a JSON-lines log; this is a Common/],
    ['alb', { key: { kind: 'user' } }, RangeError, /^`--key user` is for a Common\/Combined Log Format log; this is an AWS ALB log \(keys: ip, ip\/N\)$/],
    ['alb', { timeField: 'time' }, RangeError, /this is an AWS ALB log$/],
    ['json', { key: { kind: 'user' } }, RangeError, /^`--key user` is for a Common\/Combined Log Format log; this is a JSON-lines log \(keys: ip, ip\/N, field:PATH\)$/],
    ['json', { timeFormat: 'epoch' }, RangeError, /^Expected `--time-format` to be one of auto, iso8601, epoch-s, epoch-ms with a JSON-lines log, got `"epoch"`/],
    // The parser's own check, naming the option as it was given (no rewriting afterwards).
    ['json', { timeField: 'a..b' }, RangeError, /^Expected `--time-field` to be a dotted path/],
    ['json', null, TypeError, /`options`/],
  ])('refuses %j with %j', (name, options, type, message) => {
    const make = (): unknown => createFormat(name as FormatName, options as FormatOptions);
    expect(make).toThrow(type);
    expect(make).toThrow(message);
  });

  it('names the options as it is told', () => {
    const names = { key: 'key', timeField: 'timeField', timeFormat: 'timeFormat' };
    expect(() => createFormat('json', { timeField: '.a' }, names)).toThrow(/^Expected `timeField` to be a dotted path/);
    expect(() => createFormat('clf', { timeField: 'ts' }, names)).toThrow(/^`timeField` and `timeFormat` are for a JSON-lines log/);
  });
});

describe('the format registry', () => {
  it('each entry builds a parser of its own name, and every rule is read from the entry', () => {
    for (const format of FORMATS) {
      expect(createFormat(format.name).name).toBe(format.name);
      for (const kind of ['ip', 'user', 'field'] as const) {
        const key = kind === 'field' ? { kind, path: 'k' } : { kind };
        const build = (): unknown => createFormat(format.name, { key });
        if ((format.keys as readonly string[]).includes(kind)) expect(build).not.toThrow();
        else expect(build).toThrow(RangeError);
      }
      const timed = (): unknown => createFormat(format.name, { timeField: 't' });
      if (format.timeFormats === undefined) expect(timed).toThrow(RangeError);
      else expect(timed).not.toThrow();
    }
    expect(FORMAT_NAMES).toEqual(['clf', 'json', 'alb']);
  });

  it("each probe takes its own format's line and detectFormat tries them in probe order", () => {
    const lines: Record<string, string> = { clf: CLF, json: '{"ts":1}', alb: ALB };
    const bytes = (line: string): Buffer => Buffer.from(line);
    for (const format of FORMATS) {
      const line = bytes(lines[format.name] as string);
      expect(format.probe(line, 0, line.length), format.name).toBe(true);
    }
    expect(PROBE_ORDER.map((f) => f.name)).toEqual(['json', 'alb', 'clf']);
  });
});
