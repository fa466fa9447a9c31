import { Database, isDatabaseUnavailable } from '../../../src/db/database';
import { createLogger } from '../../../src/logger';
import { createTestDatabase, type TestDatabase } from '../../helpers/database';
import { TcpProxy } from './tcp-proxy';

describe('a connection lost in the middle of a transaction', () => {
  let database: TestDatabase;
  let proxy: TcpProxy;
  let db: Database;

  beforeAll(async () => {
    database = await createTestDatabase();
    const target = new URL(database.url);
    proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
    const proxied = new URL(database.url);
    proxied.hostname = '127.0.0.1';
    proxied.port = String(await proxy.start());
    db = new Database({ url: proxied.toString(), poolSize: 2, connectionTimeoutMs: 10_000 }, createLogger('silent'));
  });
  afterAll(async () => {
    proxy.setMode('forward');
    await db.close();
    await proxy.stop();
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
