import { RedisStore } from 'rate-limit-redis';
import { createClient } from 'redis';
import type { Logger } from '../logger';
import type { StoreFactory } from './rate-limits';

export interface RedisStores {
  storeFor: StoreFactory;
  close: () => Promise<void>;
}

/** Rate-limit counters in Redis, so every instance behind the load balancer shares one budget. */
export async function connectRedisStores(url: string, prefix: string, logger: Logger): Promise<RedisStores> {
  const client = createClient({ url });
  client.on('error', (err: Error) => logger.warn({ cause: err.message }, 'redis connection problem; rate limits pass requests meanwhile'));
  await client.connect();
  return {
    storeFor: (name) =>
      new RedisStore({
        prefix: `${prefix}${name}:`,
        sendCommand: (...args: string[]) => client.sendCommand(args),
      }),
    close: async () => {
      await client.close();
    },
  };
}
