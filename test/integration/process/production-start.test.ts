import { startServerProcess, type ServerProcess } from './server-process';
import { onSharedServerOnly } from '../../helpers/database';

const NO_USERS = 'no users exist';

/**
 * In production with no terminal, the service never makes an admin itself (its password would go
 * nowhere); it warns when there is no user to log in with, and only then.
 */
onSharedServerOnly()('starting in production without a terminal', () => {
  const started: ServerProcess[] = [];
  const start = async (...args: Parameters<typeof startServerProcess>) => {
    const server = await startServerProcess(...args);
    started.push(server);
    return server;
  };
  // Joined instances first: the one that created a database drops it.
  afterAll(async () => {
    for (const server of started.reverse()) await server.cleanup();
  });

  it('when no user exists, then the log says how to create one', async () => {
    const server = await start({ NODE_ENV: 'production' });

    expect(server.output()).toContain(NO_USERS);
  }, 30_000);

  it('when users exist, then the log does not claim there are none', async () => {
    const first = await start({ NODE_ENV: 'production', BOOTSTRAP_ADMIN_USERNAME: 'prod-admin', BOOTSTRAP_ADMIN_PASSWORD: 'prod-admin-pw' });
    const second = await start({ NODE_ENV: 'production' }, { joinDatabaseOf: first });

    expect(second.output()).not.toContain(NO_USERS);
  }, 30_000);
});
