// The top self-time functions of a V8 CPU profile (node --cpu-prof):
//   node bench/cpuprofile-top.mjs DIR_OR_FILE [N]
// With a directory, reads its newest .cpuprofile.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const [target, count = '15'] = process.argv.slice(2);
if (target === undefined) {
  console.error('usage: node bench/cpuprofile-top.mjs DIR_OR_FILE [N]');
  process.exit(2);
}
let file = target;
if (statSync(target).isDirectory()) {
  const profiles = readdirSync(target)
    .filter((name) => name.endsWith('.cpuprofile'))
    .map((name) => join(target, name))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  if (profiles.length === 0) throw new Error(`no .cpuprofile in ${target}`);
  file = profiles[0];
}

const profile = JSON.parse(readFileSync(file, 'utf8'));
const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
const selfMicros = new Map();
let total = 0;
for (let i = 0; i < profile.samples.length; i++) {
  const node = nodes.get(profile.samples[i]);
  const delta = profile.timeDeltas[i] ?? 0;
  const { functionName, url, lineNumber } = node.callFrame;
  const where = url ? `${url.split('/').slice(-2).join('/')}:${lineNumber + 1}` : '';
  const name = `${functionName || '(anonymous)'} ${where}`.trim();
  selfMicros.set(name, (selfMicros.get(name) ?? 0) + delta);
  total += delta;
}
console.log(`${file}: ${(total / 1000).toFixed(0)} ms sampled`);
console.log('| self % | self ms | function |');
console.log('| ---: | ---: | --- |');
for (const [name, micros] of [...selfMicros].sort((a, b) => b[1] - a[1]).slice(0, Number(count))) {
  console.log(`| ${((100 * micros) / total).toFixed(1)} | ${(micros / 1000).toFixed(0)} | ${name} |`);
}
