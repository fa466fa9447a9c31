import type { Role } from '../../src/shared/principals';
import { randomBytes } from 'node:crypto';
import { randomName } from './factories';

/** A route behind a bearer token, as the security suite calls it. */
export interface BearerRoute {
  method: 'get' | 'post' | 'put' | 'delete';
  /**
   * As the OpenAPI document writes it; `{appname}` is replaced by a fresh key of role viewer for each
   * call, `{username}` by a fresh user of role viewer, `{id}` by a fresh webhook endpoint (on a closed
   * loopback port, subscribed to nothing that happens).
   */
  path: string;
  /**
   * A body the route accepts, so that only the bearer token can make it refuse; a function, as a
   * create needs a new appname each time, and a user changing their password gives their own.
   */
  body?: (caller: { password?: string }) => Record<string, unknown>;
  /** Sent as a form rather than JSON. */
  form?: true;
  /** The least role that may call it, and the status it then answers. */
  allowed: { role: Role; status: number };
  /** Every role too low for it (null: no role at all): 403. */
  forbidden: (Role | null)[];
  /** For users only: an API key of any role is 403. */
  keysForbidden?: true;
}

/** An endpoint nothing is ever delivered to: port 9 on loopback (closed), an event no suite test causes. */
export const WEBHOOK_BODY = { url: 'http://127.0.0.1:9/hook', events: ['user.deleted'] };

/**
 * Every route that takes a bearer token. A new one needs only a row here: the suite checks that this
 * table and the OpenAPI document's bearer operations are the same set.
 */
export const BEARER_ROUTES: readonly BearerRoute[] = [
  { method: 'get', path: '/api/v1/api-keys', allowed: { role: 'viewer', status: 200 }, forbidden: [null] },
  {
    method: 'post',
    path: '/api/v1/api-keys',
    body: () => ({ appname: randomName('created'), roles: ['viewer'] }),
    allowed: { role: 'editor', status: 201 },
    forbidden: ['viewer', null],
  },
  { method: 'get', path: '/api/v1/api-keys/{appname}', allowed: { role: 'viewer', status: 200 }, forbidden: [null] },
  {
    method: 'put',
    path: '/api/v1/api-keys/{appname}',
    body: () => ({ description: 'changed', roles: ['viewer'] }),
    allowed: { role: 'editor', status: 200 },
    forbidden: ['viewer', null],
  },
  { method: 'delete', path: '/api/v1/api-keys/{appname}', allowed: { role: 'editor', status: 204 }, forbidden: ['viewer', null] },
  {
    method: 'put',
    path: '/api/v1/api-keys/{appname}/regen',
    body: () => ({ description: 'regenerated', roles: ['viewer'] }),
    allowed: { role: 'editor', status: 200 },
    forbidden: ['viewer', null],
  },
  { method: 'get', path: '/api/v1/api-keys/{appname}/policy', allowed: { role: 'viewer', status: 200 }, forbidden: [null] },
  {
    method: 'put',
    path: '/api/v1/api-keys/{appname}/policy',
    body: () => ({ permissions: ['billing:read'] }),
    allowed: { role: 'editor', status: 200 },
    forbidden: ['viewer', null],
  },
  {
    method: 'post',
    path: '/api/v1/api-keys/import',
    body: () => ({ keys: [{ appname: randomName('imported'), roles: ['viewer'], digest: randomBytes(32).toString('hex') }] }),
    allowed: { role: 'admin', status: 201 },
    forbidden: ['editor', 'viewer', null],
  },
  { method: 'get', path: '/api/v1/api-keys/{appname}/usage', allowed: { role: 'viewer', status: 200 }, forbidden: [null] },
  { method: 'post', path: '/api/v1/keys/verify', body: () => ({ key: 'not-a-key-of-this-service' }), allowed: { role: 'viewer', status: 200 }, forbidden: [null] },
  { method: 'get', path: '/api/v1/audit-events', allowed: { role: 'admin', status: 200 }, forbidden: ['editor', 'viewer', null] },
  { method: 'get', path: '/api/v1/webhooks', allowed: { role: 'admin', status: 200 }, forbidden: ['editor', 'viewer', null] },
  { method: 'post', path: '/api/v1/webhooks', body: () => WEBHOOK_BODY, allowed: { role: 'admin', status: 201 }, forbidden: ['editor', 'viewer', null] },
  { method: 'get', path: '/api/v1/webhooks/{id}', allowed: { role: 'admin', status: 200 }, forbidden: ['editor', 'viewer', null] },
  { method: 'put', path: '/api/v1/webhooks/{id}', body: () => WEBHOOK_BODY, allowed: { role: 'admin', status: 200 }, forbidden: ['editor', 'viewer', null] },
  { method: 'delete', path: '/api/v1/webhooks/{id}', allowed: { role: 'admin', status: 204 }, forbidden: ['editor', 'viewer', null] },
  { method: 'post', path: '/api/v1/webhooks/{id}/rotate-secret', allowed: { role: 'admin', status: 200 }, forbidden: ['editor', 'viewer', null] },
  { method: 'get', path: '/api/v1/webhooks/{id}/deliveries', allowed: { role: 'admin', status: 200 }, forbidden: ['editor', 'viewer', null] },
  { method: 'post', path: '/api/v1/webhooks/{id}/test', allowed: { role: 'admin', status: 202 }, forbidden: ['editor', 'viewer', null] },
  {
    method: 'post',
    path: '/api/auth/bearer/introspect',
    body: () => ({ token: 'not-a-token' }),
    form: true,
    allowed: { role: 'viewer', status: 200 },
    forbidden: [null],
  },
  { method: 'get', path: '/api/v1/me', allowed: { role: 'viewer', status: 200 }, forbidden: [] },
  {
    method: 'put',
    path: '/api/v1/me/password',
    body: (caller) => ({ current_password: caller.password ?? 'not-a-users-password', new_password: 'a-brand-new-password-1' }),
    allowed: { role: 'viewer', status: 204 },
    forbidden: [],
    keysForbidden: true,
  },
  { method: 'get', path: '/api/v1/users', allowed: { role: 'admin', status: 200 }, forbidden: ['editor', 'viewer', null] },
  {
    method: 'post',
    path: '/api/v1/users',
    body: () => ({ username: randomName('created'), role: 'viewer' }),
    allowed: { role: 'admin', status: 201 },
    forbidden: ['editor', 'viewer', null],
  },
  { method: 'get', path: '/api/v1/users/{username}', allowed: { role: 'admin', status: 200 }, forbidden: ['editor', 'viewer', null] },
  {
    method: 'put',
    path: '/api/v1/users/{username}',
    body: () => ({ role: 'editor', disabled: false }),
    allowed: { role: 'admin', status: 200 },
    forbidden: ['editor', 'viewer', null],
  },
  { method: 'delete', path: '/api/v1/users/{username}', allowed: { role: 'admin', status: 204 }, forbidden: ['editor', 'viewer', null] },
  {
    method: 'put',
    path: '/api/v1/users/{username}/password',
    body: () => ({ password: 'set-by-an-admin-12' }),
    allowed: { role: 'admin', status: 204 },
    forbidden: ['editor', 'viewer', null],
  },
  {
    method: 'post',
    path: '/oauth2/introspect',
    body: () => ({ token: 'not-a-token' }),
    form: true,
    allowed: { role: 'viewer', status: 200 },
    forbidden: [null],
  },
];
