import SwaggerParser from '@apidevtools/swagger-parser';
import type { OpenApiDocument } from '../../../src/openapi/openapi.document';
import { startTestApp, type TestApp } from '../../helpers/app';
import { bearer, createApiKey, createUser, loginAs, tokenForRole } from '../../helpers/factories';
import { labelValues, sample, scrape } from './support';

const TOKEN = '/api/auth/bearer/token';
const REFRESH = '/api/auth/bearer/refresh';

describe('metrics: enabled on the main port', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ METRICS_ENABLED: 'true' });
  });
  afterAll(() => t.close());

  it('when GET /metrics is requested, then 200 Prometheus text with the default process metrics', async () => {
    const res = await t.http().get('/metrics');

    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.text).toMatch(/^# TYPE process_cpu_user_seconds_total counter$/m);
    expect(res.text).toMatch(/^# TYPE nodejs_heap_size_total_bytes gauge$/m);
    expect(sample(res.text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
  });

  it('when a key is read by appname, then the request histogram names the route template, never the appname', async () => {
    const admin = await tokenForRole(t, 'admin');
    const key = await createApiKey(t);
    await t.http().get(`/api/v1/api-keys/${key.appname}`).set(bearer(admin));
    // An error thrown in the route leaves the api-keys router, which resets req.baseUrl: the label must survive.
    await t.http().get(`/api/v1/api-keys/${key.appname}-gone`).set(bearer(admin));

    const text = await scrape(t);

    const read = { method: 'GET', route: '/api/v1/api-keys/:appname' };
    expect(sample(text, 'http_request_duration_seconds_count', { ...read, status: '200' })).toBe(1);
    expect(sample(text, 'http_request_duration_seconds_count', { ...read, status: '404' })).toBe(1);
    expect(sample(text, 'http_request_duration_seconds_bucket', { ...read, status: '200', le: '+Inf' })).toBe(1);
    expect(sample(text, 'http_request_duration_seconds_count', { method: 'POST', route: '/api/v1/api-keys', status: '201' })).toBe(1);
    expect(text).not.toContain(key.appname);
  });

  it('when a request matches no route, then it is recorded as unmatched, not under its path', async () => {
    await t.http().get('/no-such-route-x9');

    const text = await scrape(t);

    expect(sample(text, 'http_request_duration_seconds_count', { method: 'GET', route: 'unmatched', status: '404' })).toBeGreaterThanOrEqual(1);
    expect(text).not.toContain('no-such-route-x9');
    expect(labelValues(text, 'http_request_duration_seconds_count', 'route').every((route) => route === 'unmatched' || route.startsWith('/'))).toBe(true);
  });

  it('when a login succeeds and a password is wrong, then tokens_issued_total counts a success and a refusal', async () => {
    const user = await createUser(t, { role: 'viewer' });
    const before = await scrape(t);

    await loginAs(t, user);
    const refused = await t.http().post(TOKEN).type('form').send({ username: user.username, password: 'wrong-password' });

    const after = await scrape(t);
    expect(refused.status).toBe(401);
    const count = (text: string, outcome: string) => sample(text, 'tokens_issued_total', { route: TOKEN, outcome });
    expect(count(after, 'success') - count(before, 'success')).toBe(1);
    expect(count(after, 'refused') - count(before, 'refused')).toBe(1);
    expect(count(after, 'error')).toBe(0);
  });

  it('when a used refresh token is presented again, then refresh_reuse_detected_total goes up by one', async () => {
    const login = await loginAs(t, await createUser(t, { role: 'viewer' }));
    const refresh = (token: string) => t.http().post(REFRESH).type('form').send({ refresh_token: token });
    expect((await refresh(login.refresh_token)).status).toBe(200);
    const before = sample(await scrape(t), 'refresh_reuse_detected_total');

    const reuse = await refresh(login.refresh_token);

    const text = await scrape(t);
    expect(reuse.status).toBe(401);
    expect(sample(text, 'refresh_reuse_detected_total') - before).toBe(1);
    expect(sample(text, 'tokens_issued_total', { route: REFRESH, outcome: 'success' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'tokens_issued_total', { route: REFRESH, outcome: 'refused' })).toBeGreaterThanOrEqual(1);
  });

  it('when scraped, then the database pool gauges report total, idle and waiting connections', async () => {
    const text = await scrape(t);

    expect(text).toMatch(/^# TYPE db_pool_connections gauge$/m);
    expect(sample(text, 'db_pool_connections', { state: 'total' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'db_pool_connections', { state: 'total' })).toBeLessThanOrEqual(8);
    expect(text).toMatch(/^db_pool_connections\{state="idle"\} \d+$/m);
    expect(sample(text, 'db_pool_connections', { state: 'waiting' })).toBe(0);
  });

  it('when POST /metrics is requested, then 405 MethodNotAllowed with Allow: GET', async () => {
    const res = await t.http().post('/metrics');

    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET');
  });

  it('when the OpenAPI document is served, then it lists GET /metrics as text/plain and is still a valid document', async () => {
    const served = (await t.http().get('/api/v1/openapi.json')).body as OpenApiDocument;
    const scraped = await t.http().get('/metrics');

    const operation = served.paths['/metrics']!.get!;
    const mediaType = String(scraped.headers['content-type']).split(';')[0]!;
    expect(Object.keys(operation.responses).sort()).toEqual(['200', 'default']);
    expect(Object.keys((operation.responses['200'] as { content: object }).content)).toEqual([mediaType]);
    await expect(SwaggerParser.validate(structuredClone(served) as never)).resolves.toEqual(expect.objectContaining({ openapi: '3.1.0' }));
  });
});
