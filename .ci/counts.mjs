// The test counts CI prints last: one line per run of vitest, then one plain closing line with the
// totals of every run. Usage: node .ci/counts.mjs <dir> <name> <node version> [<name> <version>...]
// where <dir>/<name>.json is a vitest JSON report. Exits 1 when a run has no tests or its file is
// missing (a run that crashed before writing its results).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const [dir, ...pairs] = process.argv.slice(2);
const SCOPES = { main: 'npm test: every project', 'full-a': 'unit and integration projects', 'full-b': 'redis project' };
const total = { passed: 0, failed: 0, skipped: 0 };
let ok = true;
for (let i = 0; i + 1 < pairs.length; i += 2) {
  const [name, version] = [pairs[i], pairs[i + 1]];
  const scope = SCOPES[name] ?? "the built package's smoke tests";
  let r;
  try {
    r = JSON.parse(readFileSync(join(dir, `${name}.json`), 'utf8'));
  } catch (error) {
    console.log(`node ${version}: no results for ${scope} (${error.code ?? error.message})`);
    ok = false;
    continue;
  }
  console.log(`node ${version}: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests} skipped (${scope})`);
  total.passed += r.numPassedTests;
  total.failed += r.numFailedTests;
  total.skipped += r.numPendingTests;
  if (r.numTotalTests === 0) ok = false;
}
console.log(`vitest: ${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped`);
if (!ok) process.exit(1);
