import type { TestApp } from '../../helpers/app';

/** GET /metrics on the main port; the text of a 200, checked to be the Prometheus text format. */
export async function scrape(t: TestApp): Promise<string> {
  const res = await t.http().get('/metrics');
  if (res.status !== 200) throw new Error(`scrape failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.text;
}

/**
 * The value of one sample, e.g. `sample(text, 'tokens_issued_total', { outcome: 'success' })`:
 * the first series of that name carrying all the given labels, 0 when there is none yet.
 */
export function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split('\n')) {
    const match = /^([A-Za-z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const have = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([key, value]) => have[key] === value)) return Number(match[3]);
  }
  return 0;
}

/** Label values of every series of a metric, for one label. */
export function labelValues(text: string, name: string, label: string): string[] {
  const pattern = new RegExp(`^${name}\\{[^}]*\\b${label}="([^"]*)"`, 'gm');
  return [...text.matchAll(pattern)].map((m) => m[1]!);
}
