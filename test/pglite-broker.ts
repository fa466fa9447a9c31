import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

interface Instance {
  url: string;
  stop: () => Promise<void>;
}

/**
 * Hands out PGlite instances over loopback HTTP (POST /databases, DELETE /databases/:id). PGlite
 * must start outside Jest's test sandbox, so it lives in the global-setup process, and it gives
 * every connection the same session, so each test app needs an instance of its own.
 */
export async function startPgliteBroker(): Promise<{ url: string; stop: () => Promise<void> }> {
  const { PGlite } = await import('@electric-sql/pglite');
  const { PGLiteSocketServer } = await import('@electric-sql/pglite-socket');
  const instances = new Map<string, Instance>();

  async function create(): Promise<Instance> {
    const db = await PGlite.create();
    // Room for two service pools (two-instance tests) and a few direct clients.
    const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 40 });
    await server.start();
    return {
      url: `postgres://postgres@${server.getServerConn()}/postgres`,
      stop: async () => {
        await server.stop();
        await db.close();
      },
    };
  }

  const http: Server = createServer((req, res) => {
    // No keep-alive: a reused socket the server is closing at that moment fails the client's fetch.
    const reply = (status: number, body: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json', connection: 'close' }).end(JSON.stringify(body));
    const deleting = /^\/databases\/([\w-]+)$/.exec(req.url ?? '');
    if (req.method === 'POST' && req.url === '/databases') {
      create().then(
        (instance) => {
          const id = randomUUID();
          instances.set(id, instance);
          reply(201, { id, url: instance.url });
        },
        (err: Error) => reply(500, { error: err.message }),
      );
    } else if (req.method === 'DELETE' && deleting) {
      const instance = instances.get(deleting[1]!);
      instances.delete(deleting[1]!);
      (instance ? instance.stop() : Promise.resolve()).then(() => reply(204, {}), (err: Error) => reply(500, { error: err.message }));
    } else {
      reply(404, { error: 'not found' });
    }
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));

  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`,
    stop: async () => {
      await Promise.all([...instances.values()].map((i) => i.stop().catch(() => undefined)));
      await new Promise((resolve) => http.close(resolve));
    },
  };
}
