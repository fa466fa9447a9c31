import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { PoolStats } from '../db/database';

/** 2xx issued a token, 4xx refused the request, 5xx failed on our side. */
type TokenOutcome = 'success' | 'refused' | 'error';

function outcomeOf(status: number): TokenOutcome {
  if (status >= 500) return 'error';
  return status >= 400 ? 'refused' : 'success';
}

/**
 * The service's Prometheus metrics, on a registry of its own rather than prom-client's global one,
 * so that several apps (tests) never share or double-register a metric.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly requestDuration: Histogram<'method' | 'route' | 'status'>;
  private readonly tokensIssued: Counter<'route' | 'outcome'>;
  private readonly rateLimitRejections: Counter<'limiter'>;
  private readonly refreshReuse: Counter;
  private poolStats: (() => PoolStats) | undefined;
  private readonly webhookDeliveries: Counter<'outcome'>;
  private readonly oldestDueWebhook: Gauge;

  /** For TokenService: counts each refresh token presented a second time. */
  readonly tokenEvents = { onRefreshReuse: () => this.refreshReuse.inc() };

  constructor() {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.requestDuration = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request duration by method, Express route template and status.',
      labelNames: ['method', 'route', 'status'],
      registers,
    });
    this.tokensIssued = new Counter({
      name: 'tokens_issued_total',
      help: 'Token requests by token route and outcome (success, refused = 4xx, error = 5xx).',
      labelNames: ['route', 'outcome'],
      registers,
    });
    this.rateLimitRejections = new Counter({
      name: 'rate_limit_rejections_total',
      help: 'Requests refused with 429 by a rate limiter.',
      labelNames: ['limiter'],
      registers,
    });
    this.refreshReuse = new Counter({
      name: 'refresh_reuse_detected_total',
      help: 'Already-used refresh tokens presented again (each revokes its session).',
      registers,
    });
    this.webhookDeliveries = new Counter({
      name: 'webhook_deliveries_total',
      help: 'Webhook delivery attempts by outcome: delivered (a 2xx answer), retrying (failed, a retry is scheduled), failed (given up).',
      labelNames: ['outcome'],
      registers,
    });
    this.oldestDueWebhook = new Gauge({
      name: 'webhook_oldest_due_delivery_age_seconds',
      help: 'Seconds since the oldest webhook message that is due became due, as the last poll of the dispatcher saw it; 0 when none is (deliveries keep up while it stays low).',
      registers,
    });
    const pool: Gauge<'state'> = new Gauge({
      name: 'db_pool_connections',
      help: 'Database pool connections: total open, idle, and requests waiting for one.',
      labelNames: ['state'],
      registers,
      collect: () => {
        const stats = this.poolStats?.();
        if (!stats) return;
        pool.set({ state: 'total' }, stats.total);
        pool.set({ state: 'idle' }, stats.idle);
        pool.set({ state: 'waiting' }, stats.waiting);
      },
    });
  }

  /** Reads the pool's counts at each scrape. */
  watchPool(stats: () => PoolStats): void {
    this.poolStats = stats;
  }

  /** A property: handed to the webhook dispatcher, which measures the age at each poll (a scrape queries nothing). */
  readonly webhookLag = (oldestDueAgeSeconds: number): void => {
    this.oldestDueWebhook.set(oldestDueAgeSeconds);
  };

  /** A property: handed to the webhook dispatcher as its outcome listener. */
  readonly webhookOutcome = (outcome: 'delivered' | 'retrying' | 'failed'): void => {
    this.webhookDeliveries.inc({ outcome });
  };

  /** `route` must be a route template (or `unmatched`), never a raw path: label values stay few. */
  observeRequest(method: string, route: string, status: number, seconds: number): void {
    this.requestDuration.observe({ method, route, status: String(status) }, seconds);
  }

  recordTokenOutcome(route: string, status: number): void {
    this.tokensIssued.inc({ route, outcome: outcomeOf(status) });
  }

  /** A property, not a method: it is handed to the rate limiters as their rejection listener. */
  readonly rateLimitRejected = (limiter: string): void => {
    this.rateLimitRejections.inc({ limiter });
  };

  get contentType(): string {
    return this.registry.contentType;
  }

  /** The Prometheus text exposition of every metric. */
  render(): Promise<string> {
    return this.registry.metrics();
  }
}
