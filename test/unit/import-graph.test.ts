// The import graph of src/ has no cycle (issue 21: decision-queue.ts and server-link.ts imported
// each other). Every relative import and re-export counts, type-only ones included: a cycle of
// types is still two files that cannot be understood one before the other.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(__dirname, '../../src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

/** The relative modules a file imports or re-exports (`from './x.js'`, `import('./x.js')`), as absolute `.ts` paths. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const found: string[] = [];
  for (const match of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"](\.{1,2}\/[^'"]+)['"]/g)) {
    found.push(resolve(dirname(file), (match[1] as string).replace(/\.js$/, '.ts')));
  }
  return found;
}

/** The cycles of a graph: its strongly connected components of more than one node, or a node importing itself. */
function cyclesOf(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let index = 0;
  const indices = new Map<string, number>();
  const lows = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (node: string): void => {
    indices.set(node, index);
    lows.set(node, index);
    index++;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!graph.has(next)) continue;
      if (!indices.has(next)) {
        visit(next);
        lows.set(node, Math.min(lows.get(node) as number, lows.get(next) as number));
      } else if (onStack.has(next)) {
        lows.set(node, Math.min(lows.get(node) as number, indices.get(next) as number));
      }
    }
    if (lows.get(node) === indices.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop() as string;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || (graph.get(node) ?? []).includes(node)) cycles.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!indices.has(node)) visit(node);
  return cycles;
}

describe('the import graph of src/', () => {
  it('finds cycles when there are some (the finder itself)', () => {
    const graph = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a', 'd']],
      ['d', []],
      ['e', ['e']],
    ]);
    expect(cyclesOf(graph)).toEqual([['a', 'b', 'c'], ['e']]);
    expect(cyclesOf(new Map([['a', ['b']], ['b', []]]))).toEqual([]);
  });

  it('reads the imports it must (the graph is not empty, and knows the Redis files)', () => {
    const queue = importsOf(join(SRC, 'redis/decision-queue.ts')).map((f) => relative(SRC, f));
    expect(queue).toContain('redis/server-link.ts');
    expect(queue).toContain('redis/protocol.ts');
  });

  it('has no cycle', () => {
    const graph = new Map(sourceFiles(SRC).map((file) => [file, importsOf(file)]));
    expect(graph.size).toBeGreaterThan(50);
    const cycles = cyclesOf(graph).map((cycle) => cycle.map((file) => relative(SRC, file)));
    expect(cycles).toEqual([]);
  });
});
