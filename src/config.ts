import { z } from 'zod';
import type { Config } from './config/config.types';
import { crossSettingProblems, crossVariableProblems } from './config/cross-checks';
import { serverEnv, serverSettings } from './config/server.env';
import { databaseEnv, databaseSettings } from './config/database.env';
import { secretsEnv, secretsSettings } from './config/secrets.env';
import { tokensEnv, tokensSettings } from './config/tokens.env';
import { rateLimitsEnv, rateLimitsSettings } from './config/rate-limits.env';
import { keyPoliciesEnv, keyPoliciesSettings } from './config/key-policies.env';
import { redisEnv, redisSettings } from './config/redis.env';
import { webhooksEnv, webhooksSettings } from './config/webhooks.env';
import { exchangeEnv, exchangeSettings } from './config/exchange.env';
import { usageEnv, usageSettings } from './config/usage.env';

export type * from './config/config.types';

/** Every variable the service reads, by section; docs/configuration.md is generated from it. */
export const ENV_SECTIONS = {
  Server: serverEnv,
  Database: databaseEnv,
  Secrets: secretsEnv,
  Tokens: tokensEnv,
  'Rate limits': rateLimitsEnv,
  Redis: redisEnv,
  'Key policies': keyPoliciesEnv,
  Webhooks: webhooksEnv,
  'Token exchange': exchangeEnv,
  Usage: usageEnv,
} as const;

const envSchema = z.object({ ...serverEnv, ...databaseEnv, ...secretsEnv, ...tokensEnv, ...rateLimitsEnv, ...redisEnv, ...keyPoliciesEnv, ...webhooksEnv, ...exchangeEnv, ...usageEnv });

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

/** Parses the environment once; throws ConfigError listing every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = envSchema.safeParse(env);
  const problems = [
    ...(parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join('.') || 'environment'}: ${i.message}`)),
    ...crossVariableProblems(env),
  ];
  if (!parsed.success || problems.length) throw new ConfigError(problems);
  const e = parsed.data;
  const config: Config = Object.freeze({
    ...serverSettings(e),
    ...databaseSettings(e),
    ...secretsSettings(e),
    ...tokensSettings(e),
    ...rateLimitsSettings(e),
    ...keyPoliciesSettings(e),
    ...redisSettings(e),
    ...webhooksSettings(e),
    ...exchangeSettings(e),
    ...usageSettings(e),
  });
  const settingProblems = crossSettingProblems(config);
  if (settingProblems.length) throw new ConfigError(settingProblems);
  return config;
}
