import net from 'node:net';
import { createTestDatabase, type TestDatabase } from '../../helpers/database';

export type ProxyMode = 'forward' | 'refuse' | 'blackhole';

/**
 * A loopback TCP proxy in front of PostgreSQL that a test can cut: `refuse` resets every
 * connection (the database is down), `blackhole` accepts and goes silent (a network partition).
 */
export class TcpProxy {
  private mode: ProxyMode = 'forward';
  /** Connections turned away in `refuse` mode so far. */
  refused = 0;
  private readonly pairs = new Set<{ client: net.Socket; upstream?: net.Socket }>();
  private server?: net.Server;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  async start(): Promise<number> {
    this.server = net.createServer((client) => this.accept(client));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return (this.server.address() as net.AddressInfo).port;
  }

  setMode(mode: ProxyMode): void {
    this.mode = mode;
    if (mode === 'forward') return;
    for (const pair of this.pairs) {
      if (mode === 'refuse') {
        pair.client.destroy();
        pair.upstream?.destroy();
      } else {
        // Silence both directions without closing anything.
        pair.client.unpipe();
        pair.upstream?.unpipe();
        pair.client.pause();
        pair.upstream?.pause();
      }
    }
  }

  async stop(): Promise<void> {
    for (const pair of this.pairs) {
      pair.client.destroy();
      pair.upstream?.destroy();
    }
    await new Promise((resolve) => this.server?.close(resolve));
  }

  private accept(client: net.Socket): void {
    const pair: { client: net.Socket; upstream?: net.Socket } = { client };
    this.pairs.add(pair);
    client.on('close', () => this.pairs.delete(pair));
    client.on('error', () => undefined);
    if (this.mode === 'refuse') {
      this.refused++;
      client.destroy();
      return;
    }
    if (this.mode === 'blackhole') {
      client.pause();
      return;
    }
    const upstream = net.connect(this.targetPort, this.targetHost);
    pair.upstream = upstream;
    upstream.on('error', () => client.destroy());
    upstream.on('close', () => client.destroy());
    client.on('close', () => upstream.destroy());
    client.pipe(upstream);
    upstream.pipe(client);
  }
}

/**
 * A fresh test database reached only through a TcpProxy the test can cut. `database.url` goes via
 * the proxy; `database.drop()` stops the proxy and drops the database.
 */
export async function proxiedTestDatabase(): Promise<{ proxy: TcpProxy; database: TestDatabase }> {
  const direct = await createTestDatabase();
  const target = new URL(direct.url);
  const proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
  const url = new URL(direct.url);
  url.hostname = '127.0.0.1';
  url.port = String(await proxy.start());
  return {
    proxy,
    database: {
      url: url.toString(),
      drop: async () => {
        await proxy.stop();
        await direct.drop();
      },
    },
  };
}
