import { setTimeout as sleep } from 'node:timers/promises';
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
    // Up only after the service has been turned away at least once, however slowly it starts.
    const comesUp = (async () => {
      while (proxy.refused === 0) await sleep(50);
      await sleep(1_000);
      proxy.setMode('forward');
    })();

    server = await startServerProcess({ DATABASE_CONNECT_TIMEOUT: '1' }, { database });
    await comesUp;

    expect(server.running()).toBe(true);
    expect(server.output()).toContain('database not reachable yet; retrying');
  }, 40_000);
});
