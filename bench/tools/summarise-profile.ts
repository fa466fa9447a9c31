/**
 * npx tsx bench/tools/summarise-profile.ts <file.cpuprofile> [top]
 * Self time per function (and per package) of a node --cpu-prof profile, for finding where a hot
 * path spends its time without a flame-graph viewer.
 */
import { readFileSync } from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

const [file, topArg] = process.argv.slice(2);
if (!file) throw new Error('usage: summarise-profile.ts <file.cpuprofile> [top]');
const profile = JSON.parse(readFileSync(file, 'utf8')) as { nodes: Node[]; samples: number[]; timeDeltas: number[] };
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map<number, number>();
profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
const total = [...self.values()].reduce((a, b) => a + b, 0);

const where = (url: string) => {
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  if (url.includes('/dist/')) return `service ${url.slice(url.indexOf('/dist/') + 6)}`;
  return url.startsWith('node:') ? url : url === '' ? '(native/vm)' : url;
};

const fn = new Map<string, number>();
const pkgs = new Map<string, number>();
for (const [id, us] of self) {
  const { callFrame: c } = byId.get(id)!;
  const key = `${c.functionName || '(anonymous)'} ${where(c.url)}:${c.lineNumber + 1}`;
  fn.set(key, (fn.get(key) ?? 0) + us);
  pkgs.set(where(c.url), (pkgs.get(where(c.url)) ?? 0) + us);
}
const top = Number(topArg ?? 25);
const print = (title: string, m: Map<string, number>) => {
  console.log(`\n${title}`);
  for (const [k, us] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`${((100 * us) / total).toFixed(1).padStart(5)} %  ${(us / 1000).toFixed(0).padStart(7)} ms  ${k}`);
  }
};
console.log(`total sampled ${(total / 1e6).toFixed(2)} s`);
print('self time by package/file', pkgs);
print('self time by function', fn);
