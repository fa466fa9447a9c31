import { randomBytes } from 'node:crypto';
import { ConfigError, loadConfig } from '../../src/config';

const validMasterKey = () => randomBytes(32).toString('base64');

/** The ConfigError loadConfig throws for this environment (fails the test if it does not throw one). */
function configErrorFor(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw new Error(`expected a ConfigError, got ${String(err)}`);
  }
  throw new Error(`expected loadConfig(${JSON.stringify(env)}) to throw`);
}

describe('loadConfig: defaults', () => {
  it('when the environment is empty, then the documented defaults apply', () => {
    const config = loadConfig({});

    expect(config).toMatchObject({
      port: 3000,
      accessTokenTtl: 300,
      refreshTokenTtl: 1800,
      sessionMaxTtl: 36000,
      bcryptCost: 12,
      issuer: 'http://localhost:3000',
      bootstrapAdmin: undefined,
      masterKey: undefined,
    });
  });

  it('when the environment is empty, then the login and bearer limits have their documented defaults', () => {
    const { rateLimits } = loadConfig({});

    expect(rateLimits).toMatchObject({
      passwordFailures: { limit: 10, windowSeconds: 900 },
      passwordAddressFailures: { limit: 30, windowSeconds: 900 },
      accountAlert: 50,
      bearerFailures: { limit: 300, windowSeconds: 60 },
    });
  });

  it.each(['LOGIN_ACCOUNT_ALERT', 'RATE_LIMIT_PASSWORD_ADDRESS_FAILURES', 'RATE_LIMIT_BEARER_FAILURES', 'RATE_LIMIT_BEARER_WINDOW'])(
    'when %s is 0 or not a number, then startup is refused naming it',
    (name) => {
      expect(configErrorFor({ [name]: '0' }).message).toContain(name);
      expect(configErrorFor({ [name]: 'many' }).message).toContain(name);
    },
  );

  it('when only PORT is set, then the default issuer follows that port', () => {
    expect(loadConfig({ PORT: '8081' }).issuer).toBe('http://localhost:8081');
  });

  it('when ISSUER is set, then it wins over the default', () => {
    expect(loadConfig({ PORT: '8081', ISSUER: 'https://auth.example.com' }).issuer).toBe('https://auth.example.com');
  });

  it('when lifetimes and cost are set to valid values, then they are taken as numbers', () => {
    const config = loadConfig({ ACCESS_TOKEN_TTL: '2', REFRESH_TOKEN_TTL: '5', SESSION_MAX_TTL: '9', BCRYPT_COST: '4' });

    expect(config).toMatchObject({ accessTokenTtl: 2, refreshTokenTtl: 5, sessionMaxTtl: 9, bcryptCost: 4 });
  });

  it('when BCRYPT_COST is at either end of 4..15, then it is accepted', () => {
    expect(loadConfig({ BCRYPT_COST: '4' }).bcryptCost).toBe(4);
    expect(loadConfig({ BCRYPT_COST: '15' }).bcryptCost).toBe(15);
  });

  it('when MASTER_KEY is 32 bytes of base64, then the raw key is kept', () => {
    const key = randomBytes(32);

    expect(loadConfig({ MASTER_KEY: key.toString('base64') }).masterKey?.equals(key)).toBe(true);
  });

  it('when both bootstrap variables are set, then the bootstrap admin is configured', () => {
    const config = loadConfig({ BOOTSTRAP_ADMIN_USERNAME: 'root', BOOTSTRAP_ADMIN_PASSWORD: 'long-enough-pw' });

    expect(config.bootstrapAdmin).toEqual({ username: 'root', password: 'long-enough-pw' });
  });

  it('when the config is loaded, then it cannot be changed afterwards', () => {
    const config = loadConfig({});

    expect(Object.isFrozen(config)).toBe(true);
  });
});

describe('loadConfig: bad values', () => {
  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['BCRYPT_COST', '3'],
    ['BCRYPT_COST', '16'],
    ['BCRYPT_COST', 'twelve'],
    ['ACCESS_TOKEN_TTL', '0'],
    ['ACCESS_TOKEN_TTL', '1.5'],
    ['ACCESS_TOKEN_TTL', '-5'],
    ['REFRESH_TOKEN_TTL', '0'],
    ['SESSION_MAX_TTL', 'soon'],
  ])('when %s=%s, then a ConfigError names the variable', (variable, value) => {
    const error = configErrorFor({ [variable]: value });

    expect(error.message).toContain(variable);
  });

  it.each([
    ['16 bytes', () => randomBytes(16).toString('base64')],
    ['33 bytes', () => randomBytes(33).toString('base64')],
    ['not base64 of 32 bytes', () => 'this-is-not-a-key'],
  ])('when MASTER_KEY is %s, then a ConfigError names MASTER_KEY', (_what, make) => {
    const error = configErrorFor({ MASTER_KEY: make() });

    expect(error.message).toContain('MASTER_KEY');
  });

  it('when a MASTER_KEY is refused, then the message does not echo the key', () => {
    const badKey = randomBytes(16).toString('base64');

    const error = configErrorFor({ MASTER_KEY: badKey });

    expect(error.message).not.toContain(badKey);
  });

  it('when several variables are bad, then every one of them is listed', () => {
    const error = configErrorFor({
      PORT: 'abc',
      BCRYPT_COST: '3',
      ACCESS_TOKEN_TTL: '0',
      MASTER_KEY: randomBytes(16).toString('base64'),
    });

    for (const variable of ['PORT', 'BCRYPT_COST', 'ACCESS_TOKEN_TTL', 'MASTER_KEY']) {
      expect(error.message).toContain(variable);
    }
    expect(error.problems).toHaveLength(4);
  });

  it('when a bad value and an unpaired bootstrap username occur together, then both are listed', () => {
    const error = configErrorFor({ PORT: 'abc', BOOTSTRAP_ADMIN_USERNAME: 'root' });

    expect(error.message).toContain('PORT');
    expect(error.message).toContain('BOOTSTRAP_ADMIN_PASSWORD');
  });
});

describe('loadConfig: cross-variable rules', () => {
  it('when NODE_ENV=production has no MASTER_KEY, then startup is refused with a message naming MASTER_KEY', () => {
    const error = configErrorFor({ NODE_ENV: 'production', DATABASE_URL: 'postgres://u:p@db:5432/app' });

    expect(error.message).toContain('MASTER_KEY');
  });

  it('when NODE_ENV=production has an empty MASTER_KEY, then startup is refused with a message naming MASTER_KEY', () => {
    const error = configErrorFor({ NODE_ENV: 'production', MASTER_KEY: '', DATABASE_URL: 'postgres://u:p@db:5432/app' });

    expect(error.message).toContain('MASTER_KEY');
  });

  it('when NODE_ENV=production has a valid MASTER_KEY and a DATABASE_URL, then the config loads', () => {
    const config = loadConfig({ NODE_ENV: 'production', MASTER_KEY: validMasterKey(), DATABASE_URL: 'postgres://u:p@db:5432/app' });

    expect(config.env).toBe('production');
  });

  it('when NODE_ENV=production lacks MASTER_KEY and PORT is bad, then both problems are listed', () => {
    const error = configErrorFor({ NODE_ENV: 'production', PORT: 'abc', DATABASE_URL: 'postgres://u:p@db:5432/app' });

    expect(error.message).toContain('PORT');
    expect(error.message).toContain('MASTER_KEY');
  });

  it('when MASTER_KEY and MASTER_KEY_PREVIOUS are both valid, then both raw keys are kept', () => {
    const [current, previous] = [randomBytes(32), randomBytes(32)];

    const config = loadConfig({ MASTER_KEY: current.toString('base64'), MASTER_KEY_PREVIOUS: previous.toString('base64') });

    expect(config.masterKey?.equals(current)).toBe(true);
    expect(config.masterKeyPrevious?.equals(previous)).toBe(true);
  });

  it('when MASTER_KEY_PREVIOUS is set without MASTER_KEY, then startup is refused naming MASTER_KEY_PREVIOUS', () => {
    const error = configErrorFor({ MASTER_KEY_PREVIOUS: validMasterKey() });

    expect(error.message).toContain('MASTER_KEY_PREVIOUS: only with MASTER_KEY');
  });

  it('when MASTER_KEY_PREVIOUS is not 32 bytes of base64, then startup is refused naming it, without echoing it', () => {
    const bad = randomBytes(16).toString('base64');

    const error = configErrorFor({ MASTER_KEY: validMasterKey(), MASTER_KEY_PREVIOUS: bad });

    expect(error.message).toContain('MASTER_KEY_PREVIOUS');
    expect(error.message).not.toContain(bad);
  });

  it('when MIGRATION_DATABASE_URL is set with DATABASE_URL, then both are kept; without DATABASE_URL it is refused', () => {
    const config = loadConfig({ DATABASE_URL: 'postgres://runtime@db/app', MIGRATION_DATABASE_URL: 'postgres://owner@db/app' });

    expect(config).toMatchObject({ databaseUrl: 'postgres://runtime@db/app', migrationDatabaseUrl: 'postgres://owner@db/app' });
    expect(configErrorFor({ MIGRATION_DATABASE_URL: 'postgres://owner@db/app' }).message).toContain('MIGRATION_DATABASE_URL: only with DATABASE_URL');
  });

  it('when NODE_ENV=development has no MASTER_KEY, then the config loads (a key is generated later)', () => {
    expect(loadConfig({ NODE_ENV: 'development' }).masterKey).toBeUndefined();
  });

  it('when BOOTSTRAP_ADMIN_USERNAME is set without BOOTSTRAP_ADMIN_PASSWORD, then startup is refused naming the password', () => {
    const error = configErrorFor({ BOOTSTRAP_ADMIN_USERNAME: 'root' });

    expect(error.message).toContain('BOOTSTRAP_ADMIN_PASSWORD');
  });

  it('when BOOTSTRAP_ADMIN_PASSWORD is set without BOOTSTRAP_ADMIN_USERNAME, then startup is refused', () => {
    const error = configErrorFor({ BOOTSTRAP_ADMIN_PASSWORD: 'long-enough-pw' });

    expect(error.message).toMatch(/BOOTSTRAP_ADMIN_USERNAME/);
  });

  it('when the bootstrap pairing is refused, then the message does not echo the password', () => {
    const error = configErrorFor({ BOOTSTRAP_ADMIN_PASSWORD: 'sup3r-s3cret-pw' });

    expect(error.message).not.toContain('sup3r-s3cret-pw');
  });
});

describe('loadConfig: TRUST_PROXY (Hardening: proxies)', () => {
  it.each(['true', 'TRUE', ' true '])('when TRUST_PROXY=%j, then startup is refused with a message saying what to set instead', (value) => {
    const error = configErrorFor({ TRUST_PROXY: value });

    expect(error.message).toContain('TRUST_PROXY');
    expect(error.message).toMatch(/hop count/);
    expect(error.message).toContain('loopback');
    expect(error.message).toMatch(/comma-separated list/);
  });

  it.each([
    ['unset', undefined, false],
    ['false', 'false', false],
    ['a hop count', '2', 2],
    ['loopback', 'loopback', 'loopback'],
    ['a list of addresses and CIDR ranges', '10.0.0.0/8, 192.168.1.5,::1,fd00:1::/32', '10.0.0.0/8,192.168.1.5,::1,fd00:1::/32'],
    ['the widest ranges allowed, /8 and /16, an IPv4 netmask and an IPv4-mapped range', '10.0.0.0/8,2001:db8::/16,172.16.0.0/255.240.0.0,::ffff:10.0.0.0/104', '10.0.0.0/8,2001:db8::/16,172.16.0.0/255.240.0.0,::ffff:10.0.0.0/104'],
    ['the range names Express knows', 'loopback,linklocal,uniquelocal', 'loopback,linklocal,uniquelocal'],
    ['loopback with an address', 'loopback,10.1.2.3', 'loopback,10.1.2.3'],
  ])('when TRUST_PROXY is %s, then it is kept as Express expects it', (_what, value, expected) => {
    expect(loadConfig(value === undefined ? {} : { TRUST_PROXY: value }).trustProxy).toEqual(expected);
  });

  it.each(['yes', '10.0.0.0/99', 'proxy.example.com', '10.0.0.1,,'])('when TRUST_PROXY=%j is neither a hop count, loopback nor addresses, then a ConfigError names it', (value) => {
    expect(configErrorFor({ TRUST_PROXY: value }).message).toContain('TRUST_PROXY');
  });

  it.each([
    ['two halves that cover every IPv4 address', '0.0.0.0/1,128.0.0.0/1', '0.0.0.0/1'],
    ['an IPv4 range wider than /8', '10.0.0.0/8,11.0.0.0/7', '11.0.0.0/7'],
    ['an IPv4 netmask wider than /8', '10.0.0.0/254.0.0.0', '10.0.0.0/254.0.0.0'],
    ['an IPv6 range wider than /16', '2001::/15', '2001::/15'],
    ['every IPv6 address', '::/0', '::/0'],
    ['every IPv4-mapped address', '::ffff:0.0.0.0/96', '::ffff:0.0.0.0/96'],
    ['an IPv4-mapped range wider than /8', '::ffff:10.0.0.0/103', '::ffff:10.0.0.0/103'],
    ['an IPv6 range holding the IPv4-mapped block', '::/80', '::/80'],
  ])('when TRUST_PROXY holds %s, then startup is refused like true, naming the entry (Hardening, round two)', (_what, value, entry) => {
    const error = configErrorFor({ TRUST_PROXY: value });

    expect(error.message).toContain(`TRUST_PROXY: ${entry}`);
    expect(error.message).toMatch(/hop count/);
  });

  it('when 256 IPv4 ranges of /8 together cover every address, then startup is refused like true', () => {
    const everyRange = Array.from({ length: 256 }, (_, i) => `${i}.0.0.0/8`).join(',');

    expect(configErrorFor({ TRUST_PROXY: everyRange }).message).toMatch(/TRUST_PROXY: its ranges together cover every IPv4 address/);
  });
});

describe('loadConfig: client ids (Hardening, round two)', () => {
  it('when PUBLIC_CLIENT_IDS is set, then the grants may name those, DEFAULT_CLIENT_ID and the console', () => {
    expect(loadConfig({ PUBLIC_CLIENT_IDS: 'ops-cli, web-app' }).publicClientIds).toEqual(['public', 'console', 'ops-cli', 'web-app']);
    expect(loadConfig({ CONSOLE_ENABLED: 'false' }).publicClientIds).toEqual(['public']);
  });

  it.each([
    ['DEFAULT_CLIENT_ID is the issuer', { ISSUER: 'https://auth.example.com', DEFAULT_CLIENT_ID: 'https://auth.example.com' }, 'DEFAULT_CLIENT_ID'],
    ['DEFAULT_CLIENT_ID is AUDIENCE', { AUDIENCE: 'api', DEFAULT_CLIENT_ID: 'api' }, 'DEFAULT_CLIENT_ID'],
    ['a public client is AUDIENCE', { AUDIENCE: 'api', PUBLIC_CLIENT_IDS: 'cli,api' }, 'PUBLIC_CLIENT_IDS'],
    ['a public client is the default issuer', { PUBLIC_CLIENT_IDS: 'http://localhost:3000' }, 'PUBLIC_CLIENT_IDS'],
  ])('when %s, then startup is refused naming the variable', (_what, env, variable) => {
    expect(configErrorFor(env).message).toMatch(new RegExp(`${variable}: .* ID tokens would pass for access tokens`));
  });

  it('when a public client id holds a space, then startup is refused naming PUBLIC_CLIENT_IDS', () => {
    expect(configErrorFor({ PUBLIC_CLIENT_IDS: 'my cli' }).message).toContain('PUBLIC_CLIENT_IDS');
  });
});

describe('loadConfig: METRICS_HOST (Hardening: start-up)', () => {
  it('when METRICS_HOST is unset, then the metrics server listens on 127.0.0.1, whatever HOST is', () => {
    expect(loadConfig({ HOST: '0.0.0.0', METRICS_PORT: '9464' }).metrics).toMatchObject({ port: 9464, host: '127.0.0.1' });
  });

  it('when METRICS_HOST is set, then the metrics server listens there', () => {
    expect(loadConfig({ METRICS_PORT: '9464', METRICS_HOST: '0.0.0.0' }).metrics.host).toBe('0.0.0.0');
  });
});

describe('loadConfig: running at scale', () => {
  it('when nothing is set, then pooling is per session, maintenance runs every 60 s and audit events are kept 400 days', () => {
    expect(loadConfig({})).toMatchObject({ databasePooling: 'session', maintenanceIntervalSeconds: 60, auditRetentionDays: 400 });
  });

  it('when DATABASE_POOLING=transaction, AUDIT_RETENTION_DAYS=0 and an interval are set, then they are taken', () => {
    const config = loadConfig({ DATABASE_POOLING: 'transaction', AUDIT_RETENTION_DAYS: '0', MAINTENANCE_INTERVAL_SECONDS: '5' });

    expect(config).toMatchObject({ databasePooling: 'transaction', auditRetentionDays: 0, maintenanceIntervalSeconds: 5 });
  });

  it.each([
    ['DATABASE_POOLING', 'statement'],
    ['AUDIT_RETENTION_DAYS', '-1'],
    ['AUDIT_RETENTION_DAYS', '1.5'],
    ['MAINTENANCE_INTERVAL_SECONDS', '0'],
  ])('when %s is %s, then startup is refused naming it', (name, value) => {
    expect(configErrorFor({ [name]: value }).problems).toEqual([expect.stringMatching(new RegExp(`^${name}: `))]);
  });

  it('when DATABASE_POOLING=transaction and DATABASE_URL carries options, then startup is refused: no per-connection settings', () => {
    const problems = configErrorFor({
      DATABASE_POOLING: 'transaction',
      DATABASE_URL: 'postgres://app@pgbouncer:6432/keys?options=-c%20search_path%3Dkeys',
    }).problems;

    expect(problems).toEqual([expect.stringMatching(/^DATABASE_URL: .*options.*ALTER ROLE/)]);
  });

  it('when DATABASE_URL carries options with session pooling, then the config loads', () => {
    expect(loadConfig({ DATABASE_URL: 'postgres://app@db:5432/keys?options=-c%20search_path%3Dkeys' }).databaseUrl).toContain('options=');
  });
});
