import { RedisStore } from 'rate-limit-redis';
import { createClient } from 'redis';
import type { Logger } from '../logger';
import type { StoreFactory } from './rate-limits';

export interface RedisStores {
  storeFor: StoreFactory;
  /** One command on the same client, under the same deadline and fail-fast rules (the keys' own rate limits use it). */
  sendCommand: (args: string[]) => Promise<unknown>;
  /** Whether Redis is connected now: /readyz reports it, without failing on it. */
  isUp: () => boolean;
  close: () => Promise<void>;
}

/**
 * How long one counter command may take. A request runs up to three limiters in turn, so even a
 * Redis that accepts connections but never answers costs a request under a second.
 */
const COMMAND_TIMEOUT_MS = 300;
/** Reconnect attempts back off to this, so a returning Redis is used again within a second or two. */
const MAX_RECONNECT_DELAY_MS = 1_000;

/**
 * rate-limit-redis loads its Lua scripts once, when the limiter is built, and keeps the promise: if
 * Redis was away then, the rejection would be kept forever and the limits would never count again.
 * A failed load is retried at the next use instead (a NOSCRIPT after a Redis restart is already).
 */
class RecoveringRedisStore extends RedisStore {
  override async get(key: string) {
    this.getScriptSha = this.getScriptSha.catch(() => this.loadGetScript());
    return super.get(key);
  }

  override async increment(key: string) {
    this.incrementScriptSha = this.incrementScriptSha.catch(() => this.loadIncrementScript());
    return super.increment(key);
  }
}

/**
 * Rate-limit counters in Redis, so every instance behind the load balancer shares one budget. Redis
 * down is not the service down: while it is unreachable, commands fail at once (no offline queue, a
 * command timeout) and the limiters pass every request (passOnStoreError); one warning is logged per
 * outage, and counting resumes by itself once the client reconnects.
 */
export async function connectRedisStores(url: string, prefix: string, logger: Logger): Promise<RedisStores> {
  const client = createClient({
    url,
    disableOfflineQueue: true,
    socket: { connectTimeout: COMMAND_TIMEOUT_MS * 3, reconnectStrategy: (retries) => Math.min(50 * 2 ** retries, MAX_RECONNECT_DELAY_MS) },
  });
  /** Undefined until the first connection or failure. */
  let up: boolean | undefined;
  // 'error' comes with every failed reconnect attempt: only the first of an outage is news.
  client.on('error', (err: Error) => {
    if (up === false) return;
    up = false;
    logger.warn({ cause: err.message }, 'redis unreachable; rate limits pass every request until it returns');
  });
  client.on('ready', () => {
    if (up === false) logger.info('redis reachable again; rate limits count again');
    up = true;
  });
  // A Redis away at start is an outage like any other: the service starts, and the client keeps
  // reconnecting (connect() settles only once it succeeds).
  const settled = new Promise<void>((resolve) => {
    client.once('ready', resolve);
    client.once('error', () => resolve());
  });
  client.connect().catch(() => undefined);
  await settled;
  const sendCommand = (args: string[]) => client.sendCommand(args, { timeout: COMMAND_TIMEOUT_MS });
  return {
    storeFor: (name) =>
      new RecoveringRedisStore({
        prefix: `${prefix}${name}:`,
        sendCommand: (...args: string[]) => client.sendCommand(args, { timeout: COMMAND_TIMEOUT_MS }),
      }),
    sendCommand,
    isUp: () => up === true && client.isReady,
    close: async () => {
      if (client.isOpen) await client.close();
      else client.destroy();
    },
  };
}
