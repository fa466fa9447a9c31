import path from 'node:path';
import { ConfigError, loadConfig } from '../../src/config';

describe('loadConfig: the admin console', () => {
  it('when nothing is set, then the console is on and read from the console folder beside the config module (dist/console once compiled)', () => {
    const config = loadConfig({});

    expect(config.console).toEqual({ enabled: true, dir: path.resolve(__dirname, '../../src/console') });
  });

  it('when CONSOLE_ENABLED=false and CONSOLE_DIR are set, then they are taken as given', () => {
    expect(loadConfig({ CONSOLE_ENABLED: 'false', CONSOLE_DIR: '/srv/console' }).console).toEqual({ enabled: false, dir: '/srv/console' });
  });

  it('when CONSOLE_ENABLED is neither true nor false, then the start is refused naming it', () => {
    expect(() => loadConfig({ CONSOLE_ENABLED: 'yes' })).toThrow(ConfigError);
    expect(() => loadConfig({ CONSOLE_ENABLED: 'yes' })).toThrow(/CONSOLE_ENABLED/);
  });
});
