import express, { type Express } from 'express';
import { createDecipheriv } from 'node:crypto';
import { Pool } from 'pg';

/**
 * What every floor app shares with the service and nothing more: Express 5 with the same settings
 * the service uses (no x-powered-by, no ETag), a pg Pool of the same size on the same database, the
 * same keep-alive timeout. Each floor adds exactly the unavoidable work of one hot path.
 */
export interface Floor {
  app: Express;
  pool: Pool;
  env: (name: string) => string;
  listen: () => void;
}

export function createFloor(): Floor {
  const env = (name: string): string => {
    const value = process.env[name];
    if (value === undefined || value === '') throw new Error(`floor: ${name} is required`);
    return value;
  };
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  const pool = new Pool({ connectionString: env('DATABASE_URL'), max: Number(env('DATABASE_POOL_SIZE')) });
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  const listen = () => {
    const server = app.listen(Number(env('PORT')), '127.0.0.1', () => {
      process.stdout.write('listening\n');
    });
    server.keepAliveTimeout = 5_000;
    process.on('SIGTERM', () => {
      server.close(() => void pool.end().finally(() => process.exit(0)));
      server.closeIdleConnections();
    });
  };
  return { app, pool, env, listen };
}

/**
 * Opens a sealed appkey: the format of src/crypto/secretbox.ts (version | key id | iv | tag | AES-256-GCM
 * body, AAD = version | key id | appname). The floor trusts its own master key and skips the key id check.
 */
export function openSealed(masterKey: Buffer, sealed: Buffer, associatedData: string): Buffer {
  const decipher = createDecipheriv('aes-256-gcm', masterKey, sealed.subarray(9, 21));
  decipher.setAAD(Buffer.concat([sealed.subarray(0, 9), Buffer.from(associatedData)]));
  decipher.setAuthTag(sealed.subarray(21, 37));
  return Buffer.concat([decipher.update(sealed.subarray(37)), decipher.final()]);
}
