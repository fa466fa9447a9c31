import { createTestDatabase, type TestDatabase } from '../../helpers/database';
import { startServerProcess, type ServerProcess } from '../process/server-process';
import { TcpProxy } from './tcp-proxy';

describe('a database that comes up after the service', () => {
  let database: TestDatabase;
  let proxy: TcpProxy;
  let server: ServerProcess | undefined;

  beforeAll(async () => {
    database = await createTestDatabase();
    const target = new URL(database.url);
    proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
  });
  afterAll(async () => {
    await server?.cleanup();
    await proxy.stop();
    await database.drop();
  });

  it('when the database refuses connections at start, then the service waits for it and starts once it answers', async () => {
    const proxied = new URL(database.url);
    proxied.hostname = '127.0.0.1';
    proxied.port = String(await proxy.start());
    proxy.setMode('refuse');
    setTimeout(() => proxy.setMode('forward'), 1_500);

    server = await startServerProcess({ DATABASE_CONNECT_TIMEOUT: '1' }, { database: { url: proxied.toString(), drop: async () => undefined } });

    expect(server.child.exitCode).toBeNull();
    expect(server.output()).toContain('database not reachable yet; retrying');
  }, 40_000);
});
