import SwaggerParser from '@apidevtools/swagger-parser';
import express from 'express';
import request from 'supertest';
import { createApiKeyBody, updateApiKeyBody } from '../../../src/api-keys/api-keys.schemas';
import { apiKeyTokenBody, passwordTokenBody, refreshTokenBody } from '../../../src/tokens/tokens.schemas';
import { putPolicyBody } from '../../../src/key-policies/policy.schemas';
import { buildOpenApiDocument, type OpenApiDocument } from '../../../src/openapi/openapi.document';
import { inlineSchema } from '../../../src/http/openapi';
import { startTestApp, type TestApp } from '../../helpers/app';
import { checkedAgainstOpenApi, checkResponse } from '../../helpers/openapi-contract';

const OPENAPI = '/api/v1/openapi.json';

/** Every route of the service, with its operations. */
const ROUTES: Record<string, string[]> = {
  '/': ['get'],
  '/api/v1/api-keys': ['get', 'post'],
  '/api/v1/api-keys/{appname}': ['get', 'put', 'delete'],
  '/api/v1/api-keys/{appname}/regen': ['put'],
  '/api/v1/api-keys/{appname}/usage': ['get'],
  '/api/v1/keys/verify': ['post'],
  '/api/v1/api-keys/{appname}/policy': ['get', 'put'],
  '/api/v1/audit-events': ['get'],
  '/api/v1/webhooks': ['get', 'post'],
  '/api/v1/webhooks/{id}': ['get', 'put', 'delete'],
  '/api/v1/webhooks/{id}/rotate-secret': ['post'],
  '/api/v1/webhooks/{id}/deliveries': ['get'],
  '/api/v1/webhooks/{id}/test': ['post'],
  '/api/v1/users': ['get', 'post'],
  '/api/v1/users/{username}': ['get', 'put', 'delete'],
  '/api/v1/users/{username}/password': ['put'],
  '/api/v1/me': ['get'],
  '/api/v1/me/password': ['put'],
  '/console/session': ['put', 'post', 'delete'],
  '/api/v1/auth/token': ['post'],
  '/api/auth/bearer/token': ['post'],
  '/api/auth/bearer/refresh': ['post'],
  '/api/auth/bearer/revoke': ['post'],
  '/api/auth/bearer/introspect': ['post'],
  '/oauth2/token': ['post'],
  '/oauth2/revoke': ['post'],
  '/oauth2/introspect': ['post'],
  '/.well-known/openid-configuration': ['get'],
  '/.well-known/oauth-authorization-server': ['get'],
  '/.well-known/jwks.json': ['get'],
  '/healthz': ['get'],
  '/readyz': ['get'],
  [OPENAPI]: ['get'],
};

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

function operations(doc: OpenApiDocument) {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, operation]) => ({ path, method, operation: operation as { operationId: string; security?: unknown; responses: Record<string, unknown> } })),
  );
}

describe('OpenAPI document', () => {
  let t: TestApp;
  let served: OpenApiDocument;
  beforeAll(async () => {
    t = await startTestApp();
    served = (await t.http().get(OPENAPI)).body as OpenApiDocument;
  });
  afterAll(() => t.close());

  it('when GET /api/v1/openapi.json is requested without a token, then 200 with the document built for the issuer', async () => {
    const res = await t.http().get(OPENAPI);

    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual(JSON.parse(JSON.stringify(buildOpenApiDocument(t.config.issuer))));
    expect(res.body.servers).toEqual([{ url: t.config.issuer }]);
  });

  it('when the served document is validated by swagger-parser, then it is a valid OpenAPI 3.1 document', async () => {
    const api = await SwaggerParser.validate(structuredClone(served) as never);

    expect(api).toEqual(expect.objectContaining({ openapi: '3.1.0' }));
  });

  it('when the paths are listed, then they are exactly the routes of the service with their methods', () => {
    const listed = Object.fromEntries(Object.entries(served.paths).map(([path, item]) => [path, Object.keys(item).filter((k) => METHODS.includes(k)).sort()]));

    expect(listed).toEqual(Object.fromEntries(Object.entries(ROUTES).map(([path, methods]) => [path, [...methods].sort()])));
  });

  it('when the operations are listed, then key operations, the audit trail, webhooks, users, me and introspection need bearerAuth or dpopAuth, the OAuth endpoints take client authentication, the console session its cookie, others none, and each has a default error', () => {
    const accessToken = [{ bearerAuth: [] }, { dpopAuth: [] }];
    const security: Record<string, unknown> = {
      '/oauth2/token': [{}, { clientBasic: [] }],
      '/oauth2/revoke': [{}, { clientBasic: [] }],
      '/oauth2/introspect': [...accessToken, { clientBasic: [] }],
      'post /console/session': [{ consoleSessionCookie: [] }],
      'delete /console/session': [{ consoleSessionCookie: [] }],
    };
    const bearerPaths = /^\/api\/v1\/(api-keys|keys\/verify$|audit-events$|webhooks|users|me)|^\/api\/auth\/bearer\/introspect$/;
    for (const { path, method, operation } of operations(served)) {
      const needsBearer = bearerPaths.test(path);
      expect([method, path, operation.security]).toEqual([method, path, security[`${method} ${path}`] ?? security[path] ?? (needsBearer ? accessToken : undefined)]);
      expect(operation.responses.default).toEqual({ $ref: '#/components/responses/UnexpectedError' });
    }
    expect(served.components.securitySchemes).toEqual({
      bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
      dpopAuth: expect.objectContaining({ type: 'http', scheme: 'dpop' }),
      clientBasic: expect.objectContaining({ type: 'http', scheme: 'basic' }),
      consoleSessionCookie: expect.objectContaining({ type: 'apiKey', in: 'cookie', name: '__Secure-console_session' }),
    });
    expect(operations(served).map((o) => o.operation.operationId)).toEqual(
      expect.arrayContaining([
        'v1_api_keys_get',
        'v1_api_keys_post',
        'v1_api_keys_appname_get',
        'v1_api_keys_appname_put',
        'v1_api_keys_appname_delete',
        'v1_api_keys_appname_regen_put',
        'v1_api_keys_appname_policy_get',
        'v1_api_keys_appname_policy_put',
      ]),
    );
  });

  it('when the request schemas are compared with the validating zod schemas, then they are their JSON Schema input form', () => {
    const expected = {
      CreateApiKeyBody: createApiKeyBody,
      UpdateApiKeyBody: updateApiKeyBody,
      PutKeyPolicyBody: putPolicyBody,
      ApiKeyTokenBody: apiKeyTokenBody,
      PasswordTokenBody: passwordTokenBody,
      RefreshTokenBody: refreshTokenBody,
    };

    for (const [name, schema] of Object.entries(expected)) {
      expect(served.components.schemas[name as keyof typeof expected]).toEqual(inlineSchema(schema, 'input'));
    }
  });

  it('when the token routes are described, then they take JSON and form bodies', () => {
    for (const path of ['/api/v1/auth/token', '/api/auth/bearer/token', '/api/auth/bearer/refresh']) {
      const body = served.paths[path]!.post!.requestBody as { content: Record<string, unknown> };

      expect(Object.keys(body.content).sort()).toEqual(['application/json', 'application/x-www-form-urlencoded']);
    }
  });

  it('when POST /api/v1/openapi.json is requested, then 405 MethodNotAllowed', async () => {
    const res = await t.http().post(OPENAPI);

    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET');
  });

  describe('response checking', () => {
    const json = { 'content-type': 'application/json; charset=utf-8' };
    const tokenBody = {
      access_token: 'a.b.c',
      expires_in: 300,
      refresh_expires_in: 1800,
      refresh_token: 'a.b.c',
      token_type: 'bearer',
      id_token: 'a.b.c',
      'not-before-policy': 0,
      'session-state': 'sid',
      scope: 'openid api-keys:read',
    };
    const tokenHeaders = { ...json, 'cache-control': 'no-store' };

    it('when a response matches the document, then the check passes', () => {
      expect(() => checkResponse('post', '/api/auth/bearer/token', 200, tokenHeaders, tokenBody)).not.toThrow();
    });

    it('when a status is not documented for the operation, then the check fails naming it', () => {
      expect(() => checkResponse('post', '/api/auth/bearer/token', 409, json, { status: 409, name: 'Conflict', message: 'x' })).toThrow(
        /POST \/api\/auth\/bearer\/token → 409: status not documented/,
      );
    });

    it('when a token response carries an extra field, then the check fails', () => {
      expect(() => checkResponse('post', '/api/auth/bearer/token', 200, tokenHeaders, { ...tokenBody, extra: 1 })).toThrow(/additional properties/);
    });

    it('when an error body has the wrong name for its status, then the check fails', () => {
      expect(() => checkResponse('get', '/api/v1/api-keys/x', 404, json, { status: 404, name: 'BadRequest', message: 'x' })).toThrow(/body/);
    });

    it('when a request made through the checked agent gets an undocumented body, then the awaited request rejects', async () => {
      const drifted = express().get('/healthz', (_req, res) => {
        res.json({ status: 'ok', uptime: 1 });
      });

      await expect(checkedAgainstOpenApi(request(drifted)).get('/healthz').set('Accept', 'application/json')).rejects.toThrow(
        /OpenAPI contract: GET \/healthz → 200: body does not match/,
      );
    });

    it('when a documented required header is missing, then the check fails', () => {
      expect(() => checkResponse('post', '/api/v1/auth/token', 200, json, tokenBody)).toThrow(/Cache-Control is missing/);
    });
  });
});
