// The test counts CI prints last: one line per run of vitest (the main version's full suite,
// then each other Node.js line's unit project), then one plain closing line with the totals of
// every run. Usage: node .ci/counts.mjs <main node version> <main results.json> [<results-X.Y.Z.json>...]
// (each other run's file is named after its version). Exits 1 when a run has no tests or a file
// is missing (a run that crashed before writing its results).
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';

const [mainVersion, ...files] = process.argv.slice(2);
const total = { passed: 0, failed: 0, skipped: 0 };
let ok = true;
for (const [i, file] of files.entries()) {
  const version = i === 0 ? mainVersion : `v${/node-(.+)\.json$/.exec(basename(file))?.[1]}`;
  const scope = i === 0 ? 'full suite' : 'unit project';
  let r;
  try {
    r = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    console.log(`node ${version}: no results (${error.code ?? error.message})`);
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
