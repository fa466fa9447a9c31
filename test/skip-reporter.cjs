/* global module, require, process */
// A Jest reporter beside the default one: after Jest's summary, one line per distinct reason why
// tests were skipped (test/helpers/skips.ts writes them to TEST_SKIPS_FILE, which the global setup
// creates), so a skip is never silent and never repeated per test.
// eslint-disable-next-line @typescript-eslint/no-require-imports -- Jest loads reporters with require()
const { existsSync, readFileSync, rmSync } = require('node:fs');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { dirname } = require('node:path');

class SkipReporter {
  onRunComplete() {
    const file = process.env.TEST_SKIPS_FILE;
    if (!file || !existsSync(file)) return;
    const seen = new Map();
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (!line) continue;
      const { what, why } = JSON.parse(line);
      seen.set(`${what}\u0000${why}`, { what, why });
    }
    rmSync(dirname(file), { recursive: true, force: true });
    if (!seen.size) return;
    const lines = [...seen.values()].map(({ what, why }) => `  - ${what}: ${why}`);
    process.stderr.write(`\nSkipped, and why:\n${lines.join('\n')}\n`);
  }
}

module.exports = SkipReporter;
