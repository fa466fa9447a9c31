import { createFloor } from './common';

/** Floor of GET /api/v1/api-keys?limit=1000: one SELECT of 1000 rows serialised as JSON. */
const { app, pool, listen } = createFloor();

app.get('/api/v1/api-keys', async (_req, res) => {
  const { rows } = await pool.query({
    name: 'floor_list',
    text: 'SELECT appname, description, role, last_login, last_ip FROM api_keys ORDER BY appname COLLATE "C" LIMIT $1',
    values: [1000],
  });
  res.json({ data: rows });
});

listen();
