import { RedisStore } from 'rate-limit-redis';
import type { RedisConnection } from '../cache/redis-connection';
import type { StoreFactory } from './rate-limits';

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
 * Rate-limit counters in Redis, so every instance behind the load balancer shares one budget, each
 * limiter under a prefix of its own. Every command goes through the connection's deadline; while
 * Redis is down the limiters skip their counting altogether (see buildRateLimits).
 */
export function redisStores(redis: RedisConnection, prefix: string): StoreFactory {
  return (name) =>
    new RecoveringRedisStore({
      prefix: `${prefix}${name}:`,
      sendCommand: (...args: string[]) => redis.send(args) as Promise<never>,
    });
}
