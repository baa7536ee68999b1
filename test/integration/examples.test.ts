// Every example runs as the README says (`npm run example examples/<file>`: tsx, after the build)
// and prints what the README shows. Each examples/*.ts is run here with tsx in a child process,
// against the BUILT package (its `import ... from 'ratewarden'` resolves to dist/ through the
// exports map, as in a user's project), and its output is compared with the README's block
// marked `example-output: examples/<file>`; the README's block marked `example: ... examples/<file>`
// must be the file itself, character for character. A new example without both blocks fails.
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const readme = readFileSync(join(root, 'README.md'), 'utf8');
const tsx = createRequire(import.meta.url).resolve('tsx/cli');
const examples = readdirSync(join(root, 'examples'))
  .filter((file) => file.endsWith('.ts'))
  .sort();

/** The README block (a code fence of `lang`) right under the marker `<!-- kind: ... examples/file ... -->`. */
function readmeBlock(kind: string, file: string, lang: string): string | undefined {
  for (const match of readme.matchAll(new RegExp(`<!-- ${kind}: ([^>]*)-->\\n\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``, 'g'))) {
    if (match[1]?.includes(`examples/${file} `)) return match[2];
  }
  return undefined;
}

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs `node tsx/cli --tsconfig tsconfig.examples.json examples/<file>` from the project's root
 * (the Node.js running the tests), as `npm run example` does: the examples' own compiler options
 * (tsconfig.json covers src/ and test/ only), among them the legacy decorators of examples/nestjs.ts.
 */
function runExample(file: string): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, [tsx, '--tsconfig', 'tsconfig.examples.json', join('examples', file)], { cwd: root, timeout: 60_000 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
      resolve({ code, stdout, stderr });
    });
  });
}

describe('examples/', () => {
  it('has the examples the README promises', () => {
    expect(examples).toEqual(
      expect.arrayContaining(['api-client.ts', 'express.ts', 'fastify.ts', 'fetch-handler.ts', 'headers.ts', 'hono.ts', 'nestjs.ts', 'opentelemetry.ts', 'pino.ts']),
    );
  });

  it.each(examples)('README shows examples/%s verbatim', (file) => {
    expect(readmeBlock('example', file, 'ts')).toBe(readFileSync(join(root, 'examples', file), 'utf8'));
  });

  it.each(examples)(
    'examples/%s exits 0 and prints what the README shows',
    async (file) => {
      const expected = readmeBlock('example-output', file, 'text');
      expect(expected, `README block "example-output: ... examples/${file} ..."`).toBeDefined();
      const run = await runExample(file);
      expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
      expect(run.stdout).toBe(expected);
    },
    60_000,
  );
});
