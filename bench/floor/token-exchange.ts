import { createPrivateKey, createPublicKey, randomUUID } from 'node:crypto';
import express from 'express';
import jwt from 'jsonwebtoken';
import { createFloor } from './common';

/**
 * Floor of a token exchange at POST /oauth2/token (RFC 8693): ES256 verify of the subject token (with
 * the service's public key), one ES256 sign of the narrower token that never outlives it, and one
 * INSERT of the audit event: no other write, no session read.
 */
const { app, pool, env, listen } = createFloor();
const publicKey = createPublicKey({ key: JSON.parse(env('FLOOR_PUBLIC_JWK')) as import('node:crypto').JsonWebKey, format: 'jwk' });
const privateKey = createPrivateKey(env('FLOOR_PRIVATE_KEY'));
const issuer = env('FLOOR_ISSUER');

app.post('/oauth2/token', express.urlencoded({ limit: '64kb', extended: false }), async (req, res) => {
  const { subject_token: subjectToken, scope } = (req.body ?? {}) as { subject_token?: unknown; scope?: unknown };
  let subject: jwt.JwtPayload;
  try {
    if (typeof subjectToken !== 'string') throw new Error('missing');
    subject = jwt.verify(subjectToken, publicKey, { algorithms: ['ES256'], issuer, audience: issuer }) as jwt.JwtPayload;
  } catch {
    res.status(400).json({ error: 'invalid_request' });
    return;
  }
  const now = Math.floor(Date.now() / 1000);
  const exp = Math.min(now + 300, subject.exp!);
  await pool.query({
    name: 'floor_exchange_event',
    text: `INSERT INTO audit_events (type, actor, username, client_address, request_id, details) VALUES ('token.exchanged', $1, $2, $3, $4, $5)`,
    values: [`user:${subject.preferred_username}`, subject.preferred_username, req.ip, randomUUID(), { session_id: subject.sid, scope }],
  });
  const accessToken = jwt.sign(
    { iss: issuer, aud: issuer, sub: subject.sub, sid: subject.sid, scope, iat: now, exp, jti: randomUUID(), typ: 'Bearer' },
    privateKey,
    { algorithm: 'ES256', keyid: 'floor' },
  );
  res.json({ access_token: accessToken, issued_token_type: 'urn:ietf:params:oauth:token-type:access_token', token_type: 'bearer', expires_in: exp - now });
});

listen();
