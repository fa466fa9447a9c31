import bcrypt from 'bcrypt';
import express from 'express';
import { createFloor } from './common';

/** Floor of POST /api/auth/bearer/token: one async bcrypt.compare at the service's cost (libuv pool). */
const { app, env, listen } = createFloor();
const password = env('FLOOR_PASSWORD');
const hash = bcrypt.hash(password, Number(env('BCRYPT_COST')));

app.post('/api/auth/bearer/token', express.urlencoded({ limit: '64kb', extended: false }), async (req, res) => {
  const given = (req.body as { password?: unknown } | undefined)?.password;
  if (typeof given !== 'string' || !(await bcrypt.compare(given, await hash))) {
    res.status(401).json({ status: 401 });
    return;
  }
  res.json({ ok: true });
});

void hash.then(listen);
