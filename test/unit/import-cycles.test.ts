import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const SRC = path.resolve(__dirname, '../../src');

/** Every .ts file under src/ with the files of ours it imports (type-only imports too: they are a dependency of the design). */
function importGraph(): Map<string, string[]> {
  const files: string[] = [];
  (function walk(dir: string) {
    for (const name of readdirSync(dir)) {
      const p = path.join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name.endsWith('.ts')) files.push(p);
    }
  })(SRC);
  const imports = /(?:import|export)\s+(?:type\s+)?(?:[^'"]*?\sfrom\s+)?['"](\.{1,2}\/[^'"]+)['"]|import\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;
  return new Map(
    files.map((file) => {
      const targets = [...readFileSync(file, 'utf8').matchAll(imports)]
        .map((m) => path.resolve(path.dirname(file), m[1] ?? m[2]!) + '.ts')
        .filter((target) => existsSync(target));
      return [file, targets];
    }),
  );
}

/** The first cycle found by a depth-first walk, as a list of files, or undefined. */
function findCycle(graph: Map<string, string[]>): string[] | undefined {
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (file: string): string[] | undefined => {
    if (state.get(file) === 'done') return undefined;
    if (state.get(file) === 'open') return [...stack.slice(stack.indexOf(file)), file];
    state.set(file, 'open');
    stack.push(file);
    for (const target of graph.get(file) ?? []) {
      const cycle = visit(target);
      if (cycle) return cycle;
    }
    stack.pop();
    state.set(file, 'done');
    return undefined;
  };
  for (const file of graph.keys()) {
    const cycle = visit(file);
    if (cycle) return cycle;
  }
  return undefined;
}

describe('the import graph of src/', () => {
  it('when every import of every source file is followed, then no file reaches itself again (no circle, however long)', () => {
    const graph = importGraph();

    const cycle = findCycle(graph)?.map((file) => path.relative(SRC, file));

    expect(graph.size).toBeGreaterThan(50);
    expect(cycle).toBeUndefined();
  });
});
