import { createPublicKey } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { createFloor } from './common';

/** Floor of GET /api/v1/api-keys/{appname}: ES256 verify of the bearer + one primary-key SELECT. */
const { app, pool, env, listen } = createFloor();
const publicKey = createPublicKey({ key: JSON.parse(env('FLOOR_PUBLIC_JWK')) as import('node:crypto').JsonWebKey, format: 'jwk' });
const issuer = env('FLOOR_ISSUER');

app.get('/api/v1/api-keys/:appname', async (req, res) => {
  const header = req.headers.authorization ?? '';
  try {
    jwt.verify(header.slice(7), publicKey, { algorithms: ['ES256'], issuer, audience: issuer });
  } catch {
    res.status(401).json({ status: 401 });
    return;
  }
  const { rows } = await pool.query({
    name: 'floor_read',
    text: 'SELECT appname, description, role, last_login, last_ip FROM api_keys WHERE appname = $1',
    values: [req.params.appname],
  });
  if (!rows[0]) {
    res.status(404).json({ status: 404 });
    return;
  }
  res.json({ data: rows[0] });
});

listen();
