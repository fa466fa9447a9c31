import type { Config } from './config.types';

/**
 * Rules across variables, checked on the raw environment so they are reported together with any
 * per-variable problem (a zod refine would stay silent once one field failed).
 */
export function crossVariableProblems(env: NodeJS.ProcessEnv): string[] {
  const problems: string[] = [];
  if (!env.BOOTSTRAP_ADMIN_USERNAME !== !env.BOOTSTRAP_ADMIN_PASSWORD) {
    problems.push('BOOTSTRAP_ADMIN_PASSWORD: BOOTSTRAP_ADMIN_USERNAME and BOOTSTRAP_ADMIN_PASSWORD must be set together');
  }
  if (env.DATABASE_POOLING === 'transaction' && env.DATABASE_URL && URL.canParse(env.DATABASE_URL) && new URL(env.DATABASE_URL).searchParams.has('options')) {
    // PgBouncer refuses the start-up parameter, and a setting made per connection would not follow
    // the client from one transaction to the next.
    problems.push(
      'DATABASE_URL: its options parameter sets per-connection settings, which DATABASE_POOLING=transaction cannot keep; ' +
        'set them on the role or database instead (ALTER ROLE ... SET search_path = ...)',
    );
  }
  if (env.MASTER_KEY_PREVIOUS && !env.MASTER_KEY) {
    problems.push('MASTER_KEY_PREVIOUS: only with MASTER_KEY (the new key); it holds the old key while `npm run cli -- keys rewrap` runs');
  }
  if (env.MIGRATION_DATABASE_URL && !env.DATABASE_URL) {
    problems.push('MIGRATION_DATABASE_URL: only with DATABASE_URL (the embedded database has a single role)');
  }
  if (env.NODE_ENV === 'production') {
    // The embedded database and a generated master key are for trying the service out, not for production.
    if (!env.DATABASE_URL) problems.push('DATABASE_URL: required when NODE_ENV=production (postgres://user:pass@host:5432/db)');
    if (!env.MASTER_KEY) problems.push('MASTER_KEY: required when NODE_ENV=production (try: openssl rand -base64 32)');
  }
  return problems;
}

/**
 * Rules across settings, checked once they are parsed (the issuer and audience have their defaults
 * by then). A client id equal to the audience or the issuer would give ID tokens the `aud` of access
 * tokens, so a resource server could take one for the other.
 */
export function crossSettingProblems(config: Config): string[] {
  const names = new Set([config.audience, config.issuer]);
  return config.publicClientIds
    .filter((id) => names.has(id))
    .map((id) =>
      `${id === config.defaultClientId ? 'DEFAULT_CLIENT_ID' : 'PUBLIC_CLIENT_IDS'}: ${id} is the ${id === config.audience ? 'AUDIENCE' : 'ISSUER'}; ` +
      'a client id must differ from both, or its ID tokens would pass for access tokens',
    );
}
