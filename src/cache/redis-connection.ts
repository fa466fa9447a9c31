import { createClient } from 'redis';
import type { Logger } from '../logger';

/** Thrown at once for a command while Redis is down, and for a command that found no answer in time. */
export class RedisUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RedisUnavailableError';
  }
}

/**
 * One Redis for the counters every instance shares. Redis that stalls is Redis down: every command
 * has a deadline that also covers commands already written to the socket (node-redis's own timeout
 * does not), and while Redis is down commands fail at once instead of queueing behind the stall.
 */
export interface RedisConnection {
  /** A raw command, answered within the deadline or refused with RedisUnavailableError. */
  send(args: string[]): Promise<unknown>;
  /** Whether Redis answered lately: limiters pass every request while it has not. */
  isUp(): boolean;
  /** Whether Redis answers a PING now, within the deadline (false at once while it is down): /readyz reports it. */
  answers(): Promise<boolean>;
  close(): Promise<void>;
}

export interface RedisConnectionOptions {
  /** How long a command may take, from the moment it is sent (REDIS_TIMEOUT_MS). */
  timeoutMs: number;
  /** The one warning of an outage and the one line when it ends; nothing per command. */
  logger: Logger;
}

/** Reconnect attempts back off to this, so a returning Redis is used again within a second or two. */
const MAX_RECONNECT_DELAY_MS = 1_000;
/** While down on an open connection (a stalled Redis), how often it is asked whether it answers again. */
const PROBE_INTERVAL_MS = 250;

export const REDIS_DOWN_WARNING = 'redis unreachable; rate limits pass every request until it returns';

/**
 * Connects in the background: a Redis away at start is an outage like any other, and the service
 * starts all the same. Resolves once the first connection succeeded or failed.
 */
export async function connectRedis(url: string, { timeoutMs, logger }: RedisConnectionOptions): Promise<RedisConnection> {
  const client = createClient({
    url,
    disableOfflineQueue: true,
    socket: { connectTimeout: timeoutMs * 3, reconnectStrategy: (retries) => Math.min(50 * 2 ** retries, MAX_RECONNECT_DELAY_MS) },
  });
  /** Undefined until the first connection or failure. */
  let up: boolean | undefined;
  let probing: NodeJS.Timeout | undefined;
  let probeInFlight = false;
  let closed = false;

  const markUp = () => {
    if (closed || up === true) return;
    if (up === false) logger.info('redis reachable again; rate limits count again');
    up = true;
    clearInterval(probing);
    probing = undefined;
  };

  const markDown = (cause: string) => {
    if (closed || up === false) return;
    up = false;
    logger.warn({ cause }, REDIS_DOWN_WARNING);
    // A connection that stays open but stops answering emits nothing when it answers again: ask it,
    // one question at a time (a stalled socket holds the question until Redis resumes).
    probing ??= setInterval(() => {
      if (probeInFlight || !client.isReady) return;
      probeInFlight = true;
      withDeadline(client.sendCommand(['PING']), timeoutMs * 10)
        .then(markUp, () => undefined)
        .finally(() => (probeInFlight = false));
    }, PROBE_INTERVAL_MS);
    probing.unref();
  };

  // 'error' comes with every failed reconnect attempt: markDown keeps only the first of an outage.
  client.on('error', (err: Error) => markDown(err.message));
  client.on('ready', markUp);
  const settled = new Promise<void>((resolve) => {
    client.once('ready', resolve);
    client.once('error', () => resolve());
  });
  // connect() settles only once it succeeds; the client keeps reconnecting meanwhile.
  client.connect().catch(() => undefined);
  await settled;

  async function send(args: string[]): Promise<unknown> {
    if (up !== true || !client.isReady) throw new RedisUnavailableError('redis is down');
    try {
      return await withDeadline(client.sendCommand(args), timeoutMs);
    } catch (err) {
      if (err instanceof RedisUnavailableError) markDown(err.message);
      throw err;
    }
  }

  return {
    send,
    isUp: () => up === true && client.isReady,
    answers: () =>
      send(['PING']).then(
        () => true,
        () => false,
      ),
    async close() {
      closed = true;
      clearInterval(probing);
      // A stalled Redis would hold a polite close forever: only a live one gets it.
      if (up === true && client.isReady) await withDeadline(client.close(), timeoutMs).catch(() => client.destroy());
      else if (client.isOpen) client.destroy();
    },
  };
}

/** `pending`, or RedisUnavailableError once `ms` have passed without an answer. */
function withDeadline<T>(pending: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new RedisUnavailableError(`no answer from redis within ${ms} ms`)), ms);
  });
  // A command abandoned at its deadline may still fail later: that is no news.
  pending.catch(() => undefined);
  return Promise.race([pending, deadline]).finally(() => clearTimeout(timer));
}
