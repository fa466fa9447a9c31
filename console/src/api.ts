// Talks to the service's public API with the signed-in user's token, and turns every refusal into
// an ApiError the pages can place: beside a field, as a wait, or as a message.

export type Role = 'viewer' | 'editor' | 'admin';
export const ROLE_OPTIONS = ['none', 'viewer', 'editor', 'admin'] as const;
export type RoleOption = (typeof ROLE_OPTIONS)[number];

export interface ApiKey {
  appname: string;
  description: string;
  roles: Role[];
  /** Unix time in seconds. */
  last_login: number | null;
  last_ip: string | null;
}

/** A key's policy (GET and PUT /api/v1/api-keys/{appname}/policy). Times in Unix seconds. */
export interface KeyPolicy {
  expires_at: number | null;
  enabled: boolean;
  allowed_addresses: string[];
  permissions: string[];
  rate_limit: { limit: number; window_seconds: number } | null;
  credits: { remaining: number; refill: { amount: number; interval: 'day' | 'month' } | null } | null;
  max_idle_days: number | null;
  created_at: number;
  last_used: number | null;
  disabled_reason: 'manual' | 'idle' | 'leaked' | 'holder' | null;
}

export interface AuditEvent {
  id: number;
  occurred_at: string;
  type: string;
  actor: string;
  appname: string | null;
  username: string | null;
  client_address: string | null;
  request_id: string | null;
  /** Type-specific facts: route, reason, session id, roles before and after... never a secret. */
  details: Record<string, unknown>;
}

export interface UserRecord {
  username: string;
  role: Role | null;
  disabled: boolean;
  /** Unix time in seconds. */
  created_at: number;
  last_login: number | null;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** The request field a 400 names (body.appname → appname; body.rate_limit.limit → rate_limit.limit), when it names one. */
    readonly field?: string,
    /** Seconds to wait, from a 429's Retry-After. */
    readonly retryAfter?: number,
  ) {
    super(message);
  }
}

/** Thrown for a call made after the session ended; the app is already back at sign-in. */
export class SessionEnded extends Error {}

/** Words an operator can act on, for any refusal. */
export function describe(err: unknown): string {
  if (err instanceof ApiError) {
    if (err.status === 429) return `Too many requests: try again in ${err.retryAfter ?? 60} seconds.`;
    if (err.status === 503) return 'Service unavailable, try again.';
    // The API's own words ("You are not allowed to perform this operation"): the role it checked may have changed since sign-in.
    if (err.status === 403) return /[.!]$/.test(err.message) ? err.message : `${err.message}.`;
    if (err.status >= 500) return 'The service failed to answer, try again.';
    return err.message;
  }
  return 'The service could not be reached, try again.';
}

/** Reads the uniform error body ({status, name, message}) of a refused request. */
export async function errorOf(res: Response): Promise<ApiError> {
  let message = `${res.status} ${res.statusText}`;
  try {
    const body = (await res.json()) as { message?: string; error_description?: string };
    message = body.message ?? body.error_description ?? message;
  } catch {
    // Not JSON (a proxy's page, say): the status line is all there is.
  }
  const field = /^(?:body|query|params)\.([a-z_]+(?:\.[a-z0-9_]+)*)\s*:/.exec(message)?.[1];
  const retry = Number(res.headers.get('Retry-After'));
  return new ApiError(res.status, field ? message.replace(/^[^:]+:\s*/, '') : message, field, Number.isFinite(retry) && retry > 0 ? retry : undefined);
}

/** `?a=1&b=2` from the defined values, or "". */
export function queryString(values: Record<string, string | number | undefined>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(values)) if (value !== undefined && value !== '') params.set(key, String(value));
  const text = params.toString();
  return text ? `?${text}` : '';
}
