import { createPrivateKey, createSecretKey, randomUUID } from 'node:crypto';
import express from 'express';
import jwt from 'jsonwebtoken';
import { createFloor, openSealed } from './common';

/**
 * Floor of POST /api/v1/auth/token: one SELECT of the sealed secret (opened with the master key, as
 * it must be), HS256 verify of the request token, one ES256 sign. No writes.
 */
const { app, pool, env, listen } = createFloor();
const masterKey = Buffer.from(env('MASTER_KEY'), 'base64');
const privateKey = createPrivateKey(env('FLOOR_PRIVATE_KEY'));
const issuer = env('FLOOR_ISSUER');

app.post('/api/v1/auth/token', express.json({ limit: '64kb' }), async (req, res) => {
  const token = (req.body as { jwt?: unknown } | undefined)?.jwt;
  const decoded = typeof token === 'string' ? jwt.decode(token, { json: true }) : null;
  if (typeof token !== 'string' || typeof decoded?.iss !== 'string') {
    res.status(401).json({ status: 401 });
    return;
  }
  const { rows } = await pool.query<{ key_ciphertext: Buffer }>({
    name: 'floor_secret',
    text: 'SELECT key_ciphertext FROM api_keys WHERE appname = $1',
    values: [decoded.iss],
  });
  try {
    if (!rows[0]) throw new Error('unknown appname');
    const secret = createSecretKey(openSealed(masterKey, rows[0].key_ciphertext, decoded.iss));
    jwt.verify(token, secret, { algorithms: ['HS256', 'HS384', 'HS512'], clockTolerance: 30 });
  } catch {
    res.status(401).json({ status: 401 });
    return;
  }
  const now = Math.floor(Date.now() / 1000);
  const accessToken = jwt.sign({ iss: issuer, aud: issuer, sub: decoded.iss, iat: now, exp: now + 300, jti: randomUUID() }, privateKey, {
    algorithm: 'ES256',
    keyid: 'floor',
  });
  res.json({ access_token: accessToken, token_type: 'bearer', expires_in: 300 });
});

listen();
