// Parser-only throughput of the replay's formats: `npm run bench:formats` (runs the TypeScript
// sources through tsx; nothing is built). For each format, one typical line repeated in a buffer
// and parsed line by line as the reader does (no reading, no collecting): lines per second, the
// median of 3 runs after a warm-up. Also, for the choices the formats made: JSON.parse of each
// JSON line (a string made from the bytes, then the parse), and Date.parse of an ISO time against
// parseIsoTime on its bytes. The machine's other load shows in the figures: indicative only.
import os from 'node:os';
import { AlbFormat } from '../src/formats/alb.ts';
import { ClfFormat } from '../src/formats/clf.ts';
import { parseIsoTime } from '../src/formats/iso-time.ts';
import { JsonLinesFormat } from '../src/formats/json-lines.ts';

const LINES = 300_000;

const clf =
  '203.0.113.7 - - [10/Mar/2024:15:02:07 +0100] "GET /api/v1/items?page=2&sort=desc HTTP/1.1" 200 5123 ' +
  '"https://example.com/items" "Mozilla/5.0 (X11; Linux x86_64; rv:123.0) Gecko/20100101 Firefox/123.0"';
const nginx =
  '{"time_iso8601":"2024-03-10T15:02:07+01:00","msec":"1710079327.123","remote_addr":"203.0.113.7","remote_user":"",' +
  '"request":"GET /api/v1/items?page=2&sort=desc HTTP/1.1","status":200,"body_bytes_sent":5123,"request_time":0.012,' +
  '"http_referer":"https://example.com/items","http_user_agent":"Mozilla/5.0 (X11; Linux x86_64; rv:123.0) Gecko/20100101 Firefox/123.0"}';
const caddy =
  '{"level":"info","ts":1710079327.1234567,"logger":"http.log.access.log0","msg":"handled request","request":{"remote_ip":"198.51.100.23",' +
  '"remote_port":"51234","client_ip":"203.0.113.7","proto":"HTTP/2.0","method":"GET","host":"example.com","uri":"/api/v1/items?page=2",' +
  '"headers":{"Accept":["application/json"],"Accept-Encoding":["gzip, deflate, br"],"Accept-Language":["en-US,en;q=0.9"],' +
  '"User-Agent":["Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.3 Safari/605.1.15"],' +
  '"Cookie":["REDACTED"],"Referer":["https://example.com/items"],"Sec-Fetch-Mode":["cors"]},"tls":{"resumed":false,"version":772,' +
  '"cipher_suite":4865,"proto":"h2","server_name":"example.com"}},"bytes_read":0,"user_id":"","duration":0.001234567,"size":5123,' +
  '"status":200,"resp_headers":{"Server":["Caddy"],"Content-Type":["application/json"],"Content-Length":["5123"],"Alt-Svc":["h3=\\":443\\"; ma=2592000"]}}';
const alb =
  'h2 2024-03-10T14:02:07.186641Z app/my-loadbalancer/50dc6c495c0c9188 2001:db8::7:48160 10.0.0.66:9000 0.000 0.002 0.000 200 200 5 257 ' +
  '"GET https://example.com:443/api/v1/items?page=2 HTTP/2.0" "Mozilla/5.0 (X11; Linux x86_64; rv:123.0) Gecko/20100101 Firefox/123.0" ' +
  'ECDHE-RSA-AES128-GCM-SHA256 TLSv1.2 arn:aws:elasticloadbalancing:us-east-2:123456789012:targetgroup/my-targets/73e2d6bc24d8a067 ' +
  '"Root=1-58337327-72bd00b0343d75b906739c42" "example.com" "session-reused" 1 2024-03-10T14:02:06.364000Z "forward" "-" "-" "10.0.0.66:9000" "200" "-" "-"';

/** Lines per second of `parseLine(bytes, start, end)` over LINES copies of `line`: median of 3. */
function measure(line, parseLine) {
  const length = Buffer.byteLength(line);
  const step = length + 1;
  const bytes = Buffer.from(`${line}\n`.repeat(LINES));
  const run = () => {
    let ok = 0;
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < LINES; i++) if (parseLine(bytes, i * step, i * step + length)) ok++;
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    if (ok !== LINES) throw new Error(`only ${ok} of ${LINES} lines parsed`);
    return LINES / seconds;
  };
  run(); // warm-up
  const runs = [run(), run(), run()].sort((a, b) => a - b);
  return { bytes: length, rate: runs[1] };
}

const parser = (format) => (bytes, start, end) => format.parse(bytes, start, end);
const rows = [
  ['CLF (ClfFormat)', clf, parser(new ClfFormat())],
  ['nginx escape=json (JsonLinesFormat)', nginx, parser(new JsonLinesFormat())],
  ['nginx escape=json: toString + JSON.parse', nginx, (b, s, e) => JSON.parse(b.toString('utf8', s, e)) !== null],
  ['Caddy (JsonLinesFormat)', caddy, parser(new JsonLinesFormat())],
  ['Caddy: toString + JSON.parse', caddy, (b, s, e) => JSON.parse(b.toString('utf8', s, e)) !== null],
  ['ALB (AlbFormat)', alb, parser(new AlbFormat())],
  ['ISO time: parseIsoTime', '2024-03-10T15:02:07.123+01:00', (b, s, e) => !Number.isNaN(parseIsoTime(b, s, e))],
  ['ISO time: toString + Date.parse', '2024-03-10T15:02:07.123+01:00', (b, s, e) => !Number.isNaN(Date.parse(b.toString('latin1', s, e)))],
];

console.log(`Node.js ${process.version}, ${os.cpus()[0]?.model ?? 'unknown CPU'} × ${os.cpus().length}, load average ${os.loadavg()[0].toFixed(2)}`);
console.log(`${LINES.toLocaleString('en')} lines each; median of 3 runs\n`);
console.log('| parser | bytes/line | lines/s |');
console.log('| --- | ---: | ---: |');
for (const [name, line, parseLine] of rows) {
  const { bytes, rate } = measure(line, parseLine);
  console.log(`| ${name} | ${bytes} | ${Math.round(rate).toLocaleString('en')} |`);
}
