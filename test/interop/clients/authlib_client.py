"""Authlib (Python, Debian's python3-authlib), unmodified, against the running service.

Run by test/interop/clients.test.ts as `/usr/bin/python3 authlib_client.py <scenario>`, with ISSUER,
APPNAME, APPKEY (an API key of a role with api-keys:read), USERNAME, PASSWORD (a user) and
PUBLIC_CLIENT_ID in the environment; prints one JSON object on its last line.
"""
import base64
import json
import os
import sys
import traceback
import uuid

# The service runs on plain http on loopback: Authlib's own switch for that.
os.environ['AUTHLIB_INSECURE_TRANSPORT'] = '1'

import requests  # noqa: E402
from authlib.integrations.requests_client import AssertionSession, OAuth2Session, OAuthError  # noqa: E402
from authlib.oauth2.rfc7523 import ClientSecretJWT  # noqa: E402

ISSUER = os.environ['ISSUER']


def claims_of(jwt):
    payload = jwt.split('.')[1]
    return json.loads(base64.urlsafe_b64decode(payload + '=' * (-len(payload) % 4)))


def described(token):
    """What a token response held, without the raw tokens."""
    return {
        'fields': sorted(token.keys()),
        'token_type': token.get('token_type'),
        'scope': token.get('scope'),
        'session_state': token.get('session-state'),
        'access': claims_of(token['access_token']),
        'refresh_token': 'refresh_token' in token,
        'id_token': claims_of(token['id_token']) if 'id_token' in token else None,
    }


def refusal(call):
    try:
        call()
    except OAuthError as err:
        return {'name': type(err).__name__, 'error': err.error, 'description': err.description}
    raise AssertionError('expected a refusal, but the call succeeded')


def discover():
    """RFC 8414 metadata from the issuer URL (Authlib's requests client takes endpoints, not an issuer)."""
    metadata = requests.get(ISSUER + '/.well-known/oauth-authorization-server', timeout=10).json()
    if metadata['issuer'] != ISSUER:
        raise AssertionError('issuer mismatch: %r' % metadata['issuer'])
    return metadata


def api_key_session(method, secret=None):
    session = OAuth2Session(os.environ['APPNAME'], secret or os.environ['APPKEY'], token_endpoint_auth_method=method)
    if method == 'client_secret_jwt':
        session.register_client_auth_method(ClientSecretJWT(discover()['token_endpoint']))
    return session


def client_credentials():
    token_endpoint = discover()['token_endpoint']
    result = {}
    for method in ('client_secret_basic', 'client_secret_post', 'client_secret_jwt'):
        token = api_key_session(method).fetch_token(token_endpoint, grant_type='client_credentials', scope='api-keys:read')
        result[method] = described(token)
    wrong = api_key_session('client_secret_basic', os.environ['APPKEY'] + 'x')
    result['wrong_secret'] = refusal(lambda: wrong.fetch_token(token_endpoint, grant_type='client_credentials'))
    return result


def password_refresh():
    token_endpoint = discover()['token_endpoint']
    session = OAuth2Session(os.environ['PUBLIC_CLIENT_ID'], token_endpoint_auth_method='none', scope='openid api-keys:read')
    login = session.fetch_token(token_endpoint, username=os.environ['USERNAME'], password=os.environ['PASSWORD'])
    refreshed = session.refresh_token(token_endpoint)
    reused = refusal(lambda: session.refresh_token(token_endpoint, refresh_token=login['refresh_token']))
    return {'login': described(login), 'refreshed': described(refreshed), 'reused': reused}


def jwt_bearer():
    token_endpoint = discover()['token_endpoint']
    appname = os.environ['APPNAME']
    # The service requires a jti (RFC 7523 makes it optional; Authlib adds none by default).
    session = AssertionSession(
        token_endpoint, issuer=appname, subject=appname, audience=token_endpoint,
        claims={'jti': str(uuid.uuid4())}, key=os.environ['APPKEY'], header={'alg': 'HS256'},
    )
    token = session.refresh_token()
    return {'tokens': described(token)}


def introspect_revoke():
    metadata = discover()
    user = OAuth2Session(os.environ['PUBLIC_CLIENT_ID'], token_endpoint_auth_method='none', scope='openid api-keys:read')
    login = user.fetch_token(metadata['token_endpoint'], username=os.environ['USERNAME'], password=os.environ['PASSWORD'])
    key = api_key_session('client_secret_basic')
    before = key.introspect_token(metadata['introspection_endpoint'], token=login['access_token']).json()
    revoked = key.revoke_token(metadata['revocation_endpoint'], token=login['refresh_token'], token_type_hint='refresh_token')
    after = key.introspect_token(metadata['introspection_endpoint'], token=login['access_token']).json()
    wrong = api_key_session('client_secret_basic', os.environ['APPKEY'] + 'x')
    wrong_answer = wrong.introspect_token(metadata['introspection_endpoint'], token=login['access_token'])
    return {
        'before': before,
        'revoke_status': revoked.status_code,
        'after': after,
        'refresh_after': refusal(lambda: user.refresh_token(metadata['token_endpoint'])),
        'wrong_secret': {'status': wrong_answer.status_code, 'body': wrong_answer.json()},
    }


SCENARIOS = {
    'client-credentials': client_credentials,
    'password-refresh': password_refresh,
    'jwt-bearer': jwt_bearer,
    'introspect-revoke': introspect_revoke,
}

if __name__ == '__main__':
    try:
        print(json.dumps(SCENARIOS[sys.argv[1]]()))
    except Exception:  # noqa: BLE001 - everything goes to stderr with a non-zero exit
        traceback.print_exc()
        sys.exit(1)
