import { Database, isDatabaseUnavailable } from '../../../src/db/database';
import { createLogger } from '../../../src/logger';
import type { TestDatabase } from '../../helpers/database';
import { proxiedTestDatabase, type TcpProxy } from './tcp-proxy';

describe('a connection lost in the middle of a transaction', () => {
  let database: TestDatabase;
  let proxy: TcpProxy;
  let db: Database;

  beforeAll(async () => {
    ({ proxy, database } = await proxiedTestDatabase());
    db = new Database({ url: database.url, poolSize: 2, connectionTimeoutMs: 10_000 }, createLogger('silent'));
  });
  afterAll(async () => {
    proxy.setMode('forward');
    await db.close();
    await database.drop();
  });

  it('when the connection dies between two statements, then the transaction fails as unavailable and the pool recovers', async () => {
    const failure = await db
      .withTransaction(async (tx) => {
        await tx.query('SELECT 1');
        proxy.setMode('refuse');
        // The socket dies while no statement is running: the moment pg emits 'error' on the client.
        await new Promise((resolve) => setTimeout(resolve, 100));
        await tx.query('SELECT 1');
      })
      .catch((err: unknown) => err);

    expect(isDatabaseUnavailable(failure)).toBe(true);
    proxy.setMode('forward');
    expect((await db.query<{ ok: number }>('SELECT 1 AS ok')).rows).toEqual([{ ok: 1 }]);
  });
});
