import { createHash, createPublicKey } from 'node:crypto';
import express from 'express';
import jwt from 'jsonwebtoken';
import { createFloor } from './common';

/**
 * Floor of POST /api/v1/keys/verify: ES256 verify of the bearer, one SELECT by the SHA-256 digest of
 * the presented key, a JSON answer. With FLOOR_CREDITS=true, plus one conditional UPDATE of the
 * key's credits (the least a verification that spends credits exactly must do).
 */
const { app, pool, env, listen } = createFloor();
const publicKey = createPublicKey({ key: JSON.parse(env('FLOOR_PUBLIC_JWK')) as import('node:crypto').JsonWebKey, format: 'jwk' });
const issuer = env('FLOOR_ISSUER');
const credits = process.env.FLOOR_CREDITS === 'true';

app.post('/api/v1/keys/verify', express.json({ limit: '64kb' }), async (req, res) => {
  try {
    jwt.verify((req.headers.authorization ?? '').slice(7), publicKey, { algorithms: ['ES256'], issuer, audience: issuer });
  } catch {
    res.status(401).json({ status: 401 });
    return;
  }
  const key = (req.body as { key?: unknown } | undefined)?.key;
  if (typeof key !== 'string') {
    res.status(400).json({ status: 400 });
    return;
  }
  const digest = createHash('sha256').update(key).digest();
  const { rows } = await pool.query<{ id: string; appname: string; role: string | null; permissions: string[]; enabled: boolean }>({
    name: 'floor_verify',
    text: 'SELECT id, appname, role, permissions, enabled FROM api_keys WHERE key_digest = $1',
    values: [digest],
  });
  const row = rows[0];
  if (!row) {
    res.json({ valid: false, code: 'NOT_FOUND' });
    return;
  }
  let remaining: number | null = null;
  if (credits) {
    const spent = await pool.query<{ credits_remaining: string }>({
      name: 'floor_spend',
      text: 'UPDATE api_keys SET credits_remaining = credits_remaining - 1 WHERE id = $1 AND credits_remaining >= 1 RETURNING credits_remaining',
      values: [row.id],
    });
    remaining = spent.rows[0] ? Number(spent.rows[0].credits_remaining) : 0;
  }
  res.json({ valid: row.enabled, code: row.enabled ? 'VALID' : 'DISABLED', appname: row.appname, roles: row.role ? [row.role] : [], permissions: row.permissions, credits: credits ? { remaining } : null });
});

listen();
