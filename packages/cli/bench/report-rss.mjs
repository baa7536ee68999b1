// Preloaded into a benchmarked process (node --import): prints its peak resident set on exit.
process.on('exit', () => {
  process.stderr.write(`maxRSS=${process.resourceUsage().maxRSS}\n`);
});
