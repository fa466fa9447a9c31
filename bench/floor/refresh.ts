import { createPrivateKey, createPublicKey, randomUUID } from 'node:crypto';
import express from 'express';
import jwt from 'jsonwebtoken';
import { createFloor } from './common';

/**
 * Floor of POST /api/auth/bearer/refresh: ES256 verify, one conditional UPDATE ... RETURNING that
 * consumes the presented refresh token, one ES256 sign of the next one. Sessions live in
 * bench_floor_sessions, seeded by the driver.
 */
const { app, pool, env, listen } = createFloor();
const privateKey = createPrivateKey(env('FLOOR_PRIVATE_KEY'));
const publicKey = createPublicKey(privateKey);
const issuer = env('FLOOR_ISSUER');

app.post('/api/auth/bearer/refresh', express.urlencoded({ limit: '64kb', extended: false }), async (req, res) => {
  const token = (req.body as { refresh_token?: unknown } | undefined)?.refresh_token;
  let claims: jwt.JwtPayload;
  try {
    if (typeof token !== 'string') throw new Error('missing');
    claims = jwt.verify(token, publicKey, { algorithms: ['ES256'], issuer, audience: issuer }) as jwt.JwtPayload;
  } catch {
    res.status(401).json({ status: 401 });
    return;
  }
  const now = Math.floor(Date.now() / 1000);
  const next = randomUUID();
  const { rows } = await pool.query<{ refresh_expires_at: string }>({
    name: 'floor_rotate',
    text: `UPDATE bench_floor_sessions SET refresh_jti = $3, refresh_expires_at = to_timestamp($4)
            WHERE id = $1 AND refresh_jti = $2 AND revoked_at IS NULL
            RETURNING floor(extract(epoch FROM refresh_expires_at))::bigint AS refresh_expires_at`,
    values: [claims.sid, claims.jti, next, now + 1800],
  });
  if (!rows[0]) {
    res.status(401).json({ status: 401 });
    return;
  }
  const refreshToken = jwt.sign(
    { iss: issuer, aud: issuer, sub: claims.sub, sid: claims.sid, jti: next, typ: 'Refresh', iat: now, exp: Number(rows[0].refresh_expires_at) },
    privateKey,
    { algorithm: 'ES256', keyid: 'floor' },
  );
  res.json({ refresh_token: refreshToken, token_type: 'bearer' });
});

listen();
