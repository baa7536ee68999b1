// What the tests of `ratewarden replay` replay: the built-in sample, the crafted fixture (with the
// hand computation of its outcome), and a programmatic replay of a text with a constant timer.
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { replay, type ReplayOptions, type ReplaySummary } from '../../src/replay.js';

/** The built-in sample (10,000 requests, gzipped). */
export const SAMPLE = fileURLToPath(new URL('../../data/access-combined.log.gz', import.meta.url));

/** A programmatic replay of `text`, chunked as given, with a constant timer. */
export function replayText(
  text: string | Buffer,
  options: Omit<ReplayOptions, 'input'> = {},
  chunkSize = Infinity,
): Promise<ReplaySummary> {
  const bytes = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += Math.min(chunkSize, bytes.length)) {
    chunks.push(bytes.subarray(i, i + Math.min(chunkSize, bytes.length)));
  }
  return replay({ input: Readable.from(chunks), timer: () => 0, ...options });
}

// ------------------------------------------------------------------------------------------
// The crafted fixture, replayed with --threshold 2 --window 10 (10 000 ms).
//
//  line  client    log time                    UTC offset from 2024-01-01T00:00:00Z
//   1    10.0.0.1  01/Jan/2024:00:00:05 +0000   5 s   (Combined format)
//   2    10.0.0.1  01/Jan/2024:00:00:01 +0000   1 s   (goes backwards; CRLF)
//   3    10.0.0.1  31/Dec/2023:17:00:03 -0700   3 s   (the zone moves it to 2024)
//   4    10.0.0.2  01/Jan/2024:00:00:02 +0000   2 s   (CRLF)
//   5    malformed ("this is not a log line", CRLF): no [timestamp]
//   6    10.0.0.1  01/Jan/2024:00:00:11 +0000  11 s
//   7    10.0.0.1  01/Jan/2024:00:00:12 +0000  12 s
//   8    10.0.0.2  01/Jan/2024:01:00:02 +0100   2 s   (the zone moves it back an hour)
//   9    10.0.0.2  01/Jan/2024:00:00:02 +0000   2 s
//   then two empty lines at the end: ignored.
//
// In time order (ties in file order): A@1(l2) B@2(l4) B@2(l8) B@2(l9) A@3(l3) A@5(l1)
// A@11(l6) A@12(l7). With 2 per 10 s (evict t <= now - 10, allow if fewer than 2 remain):
//   A@1  allowed      A: [1]
//   B@2  allowed      B: [2]
//   B@2  allowed      B: [2, 2]
//   B@2  REJECTED     (2 live)
//   A@3  allowed      A: [1, 3]
//   A@5  REJECTED     (nothing <= -5 to evict; 2 live)
//   A@11 allowed      evicts 1 (<= 1); A: [3, 11]
//   A@12 REJECTED     nothing <= 2 to evict; 2 live
// => 8 requests, 5 allowed, 3 rejected; 2 clients, both limited (A 2 of 5, B 1 of 3);
//    1 malformed line; 9 lines.
// Check that the expectation can fail: ignoring the zones gives 1 rejection (A@-25197 and
// B@3602 spread the requests out); replaying in file order (no sort) gives 4.
export const FIXTURE = [
  '10.0.0.1 - - [01/Jan/2024:00:00:05 +0000] "GET /a HTTP/1.1" 200 10 "-" "curl/8.0"\n',
  '10.0.0.1 - - [01/Jan/2024:00:00:01 +0000] "GET /b HTTP/1.1" 200 10\r\n',
  '10.0.0.1 - - [31/Dec/2023:17:00:03 -0700] "GET /c HTTP/1.1" 200 -\n',
  '10.0.0.2 - frank [01/Jan/2024:00:00:02 +0000] "POST /d HTTP/1.1" 201 0\r\n',
  'this is not a log line\r\n',
  '10.0.0.1 - - [01/Jan/2024:00:00:11 +0000] "GET /e HTTP/1.1" 200 10\n',
  '10.0.0.1 - - [01/Jan/2024:00:00:12 +0000] "GET /f HTTP/1.1" 200 10\n',
  '10.0.0.2 - - [01/Jan/2024:01:00:02 +0100] "GET /g HTTP/1.1" 200 10\n',
  '10.0.0.2 - - [01/Jan/2024:00:00:02 +0000] "GET /h HTTP/1.1" 304 -\n',
  '\n',
  '\n',
].join('');
export const FIXTURE_ARGS = ['--threshold', '2', '--window', '10'];
export const FIXTURE_EXPECTED = {
  lines: 9,
  requests: 8,
  allowed: 5,
  rejected: 3,
  clients: 2,
  clients_limited: 2,
  malformed: 1,
  top_limited: [
    { client: '10.0.0.1', rejected: 2, requests: 5 },
    { client: '10.0.0.2', rejected: 1, requests: 3 },
  ],
};
