import type { TestDatabase } from '../../helpers/database';
import { startServerProcess, type ServerProcess } from '../process/server-process';
import { proxiedTestDatabase, type TcpProxy } from './tcp-proxy';

describe('a database that comes up after the service', () => {
  let database: TestDatabase;
  let proxy: TcpProxy;
  let server: ServerProcess | undefined;

  beforeAll(async () => {
    ({ proxy, database } = await proxiedTestDatabase());
  });
  afterAll(async () => {
    await server?.cleanup();
    await database.drop();
  });

  it('when the database refuses connections at start, then the service waits for it and starts once it answers', async () => {
    proxy.setMode('refuse');
    setTimeout(() => proxy.setMode('forward'), 1_500);

    server = await startServerProcess({ DATABASE_CONNECT_TIMEOUT: '1' }, { database });

    expect(server.child.exitCode).toBeNull();
    expect(server.output()).toContain('database not reachable yet; retrying');
  }, 40_000);
});
