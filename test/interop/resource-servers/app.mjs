// Resource servers built on the common Node libraries, unmodified, each configured with nothing but
// the service's jwks_uri, issuer and audience (RS_JWKS_URI, RS_ISSUER, RS_AUDIENCE; not ISSUER and
// AUDIENCE, which express-oauth2-jwt-bearer would read by itself). One Express app, a route per
// library: 200 with a few claims when the library accepts the bearer token, else its own status.
// Listens on a free loopback port and prints {"port": n}; run by test/interop/resource-servers.test.ts.
import process from 'node:process';
import { URL } from 'node:url';
import express from 'express';
import * as jose from 'jose';
import { expressjwt } from 'express-jwt';
import jwksRsa from 'jwks-rsa';
import { auth } from 'express-oauth2-jwt-bearer';
import passport from 'passport';
import { ExtractJwt, Strategy as JwtStrategy } from 'passport-jwt';

const issuer = process.env.RS_ISSUER;
const audience = process.env.RS_AUDIENCE;
const jwksUri = process.env.RS_JWKS_URI;
if (!issuer || !audience || !jwksUri) throw new Error('RS_ISSUER, RS_AUDIENCE and RS_JWKS_URI must be set');

const app = express();

/** What a library accepted, as claims; each library leaves them in its own place. */
const accepted = (library, claims) => (_req, res) =>
  res.json({ library, sub: claims(_req).sub, client_id: claims(_req).client_id, scope: claims(_req).scope, aud: claims(_req).aud });

// jose (the repository's 5.10): a remote JWK Set and jwtVerify.
const joseKeys = jose.createRemoteJWKSet(new URL(jwksUri));
app.get(
  '/jose',
  async (req, res, next) => {
    const token = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (!token) return res.status(401).json({ library: 'jose', message: 'no bearer token' });
    try {
      req.claims = (await jose.jwtVerify(token, joseKeys, { issuer, audience })).payload;
      next();
    } catch (err) {
      res.status(401).json({ library: 'jose', code: err.code, message: err.message });
    }
  },
  accepted('jose', (req) => req.claims),
);

// express-jwt with jwks-rsa's expressJwtSecret.
app.get(
  '/express-jwt',
  expressjwt({ secret: jwksRsa.expressJwtSecret({ jwksUri, cache: true, rateLimit: true }), algorithms: ['ES256'], issuer, audience }),
  accepted('express-jwt', (req) => req.auth),
);

// express-oauth2-jwt-bearer, given the three values; once more with discovery from the issuer
// (issuerBaseURL), and once in its opt-in RFC 9068 mode (strict: typ must be at+jwt).
app.get('/express-oauth2-jwt-bearer', auth({ issuer, jwksUri, audience }), accepted('express-oauth2-jwt-bearer', (req) => req.auth.payload));
app.get('/express-oauth2-jwt-bearer/discovery', auth({ issuerBaseURL: issuer, audience }), accepted('express-oauth2-jwt-bearer', (req) => req.auth.payload));
app.get('/express-oauth2-jwt-bearer/strict', auth({ issuer, jwksUri, audience, strict: true }), accepted('express-oauth2-jwt-bearer', (req) => req.auth.payload));

// passport-jwt with jwks-rsa's passportJwtSecret.
passport.use(
  new JwtStrategy(
    {
      secretOrKeyProvider: jwksRsa.passportJwtSecret({ jwksUri, cache: true, rateLimit: true }),
      jwtFromRequest: ExtractJwt.fromAuthHeaderAsBearerToken(),
      issuer,
      audience,
      algorithms: ['ES256'],
    },
    (payload, done) => done(null, payload),
  ),
);
app.get(
  '/passport-jwt',
  passport.initialize(),
  // A custom callback only to tell why a token was refused (passport's default answer is a bare 401).
  (req, res, next) =>
    passport.authenticate('jwt', { session: false }, (err, user, info) => {
      if (err) return next(err);
      if (!user) return res.status(401).json({ library: 'passport-jwt', message: String(info?.message ?? info) });
      req.user = user;
      next();
    })(req, res, next),
  accepted('passport-jwt', (req) => req.user),
);

// Refusals as JSON: the status the library chose and its message.
app.use((err, req, res, _next) => {
  res.status(err.status ?? err.statusCode ?? 500).json({ library: req.path.split('/')[1], code: err.code, message: err.message });
});

const server = app.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
