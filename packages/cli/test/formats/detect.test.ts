// Choosing a format (src/formats/detect.ts): detectFormat on first lines, createFormat and its
// option errors.
import { describe, expect, it } from 'vitest';
import { AlbFormat } from '../../src/formats/alb.js';
import { ClfFormat } from '../../src/formats/clf.js';
import { createFormat, detectFormat, type FormatOptions } from '../../src/formats/detect.js';
import { JsonLinesFormat } from '../../src/formats/json-lines.js';
import type { FormatName } from '../../src/formats/format.js';

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
    expect(createFormat('clf', { key: 'user' }).keyLabel).toBe('authenticated user (%u)');
    expect(createFormat('alb')).toBeInstanceOf(AlbFormat);
    const json = createFormat('json', { key: 'request.remote_ip', timeField: 'ts', timeFormat: 'epoch-s' });
    expect(json.keyLabel).toBe('JSON field request.remote_ip');
    if (!(json instanceof JsonLinesFormat)) throw new Error('not a JsonLinesFormat');
    expect(json.timeField).toBe('ts');
    expect(json.timeFormat).toBe('epoch-s');
  });

  it.each([
    ['xml', {}, RangeError, /Expected `format` to be one of "clf", "json", "alb", got `"xml"` \(string\)/],
    [3, {}, TypeError, /`format`/],
    ['clf', { key: 'ip' }, RangeError, /Expected `key` to be "host" or "user" with the clf format, got `"ip"`/],
    ['clf', { key: 1 }, TypeError, /`key`/],
    ['clf', { timeField: 'ts' }, RangeError, /Expected `timeField` to be undefined with the clf format/],
    ['clf', { timeFormat: 'auto' }, RangeError, /`timeFormat` to be undefined with the clf format/],
    ['alb', { key: 'client' }, RangeError, /`key` to be undefined with the alb format/],
    ['alb', { timeField: 'time' }, RangeError, /`timeField` to be undefined with the alb format/],
    ['json', { timeFormat: 'epoch' }, RangeError, /`timeFormat`/],
    ['json', null, TypeError, /`options`/],
  ])('refuses %j with %j', (name, options, type, message) => {
    const make = (): unknown => createFormat(name as FormatName, options as FormatOptions);
    expect(make).toThrow(type);
    expect(make).toThrow(message);
  });
});
