import { readFileSync } from 'node:fs';
import { CONFIGURATION_PAGE, renderConfigurationPage } from '../../scripts/docs-config';
import { ENV_SECTIONS } from '../../src/config';

describe('docs/configuration.md', () => {
  it('when the config schema changes, then the committed page is regenerated with it (npm run docs:config)', () => {
    const committed = readFileSync(CONFIGURATION_PAGE, 'utf8');

    // A plain comparison first: on a stale page, Jest's diff of two long strings would bury the fix.
    if (committed !== renderConfigurationPage()) throw new Error('docs/configuration.md is stale: run `npm run docs:config` and commit the page');
    expect(committed).toBe(renderConfigurationPage());
  });

  it('when the page is read, then every variable of every section has its row', () => {
    const page = readFileSync(CONFIGURATION_PAGE, 'utf8');

    for (const shape of Object.values(ENV_SECTIONS)) {
      for (const name of Object.keys(shape)) expect(page).toContain(`| \`${name}\` |`);
    }
  });
});
