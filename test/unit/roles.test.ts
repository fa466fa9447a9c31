import { canManageKeyWithRole, canRead, canWrite, scopeFor, type Role } from '../../src/shared/principals';

type MaybeRole = Role | null;
const name = (r: MaybeRole) => r ?? 'no role';

describe('canRead (list, get)', () => {
  it.each<[MaybeRole, boolean]>([
    ['viewer', true],
    ['editor', true],
    ['admin', true],
    [null, false],
  ])('when the principal is %s, then reading keys is %s', (role, expected) => {
    expect(canRead(role)).toBe(expected);
  });
});

describe('canWrite (create, update, regen, delete)', () => {
  it.each<[MaybeRole, boolean]>([
    ['viewer', false],
    ['editor', true],
    ['admin', true],
    [null, false],
  ])('when the principal is %s, then writing keys is %s', (role, expected) => {
    expect(canWrite(role)).toBe(expected);
  });
});

describe('canManageKeyWithRole', () => {
  // principal role × target key role → allowed (contract table: editor only for viewer/editor/none, admin all).
  const matrix: [MaybeRole, MaybeRole, boolean][] = [
    ['viewer', null, false],
    ['viewer', 'viewer', false],
    ['viewer', 'editor', false],
    ['viewer', 'admin', false],
    ['editor', null, true],
    ['editor', 'viewer', true],
    ['editor', 'editor', true],
    ['editor', 'admin', false],
    ['admin', null, true],
    ['admin', 'viewer', true],
    ['admin', 'editor', true],
    ['admin', 'admin', true],
    [null, null, false],
    [null, 'viewer', false],
    [null, 'editor', false],
    [null, 'admin', false],
  ];

  it.each(matrix.map(([p, t, allowed]) => [name(p), name(t), allowed, p, t] as const))(
    'when a %s principal manages a key with %s, then allowed is %s',
    (_p, _t, allowed, principal, target) => {
      expect(canManageKeyWithRole(principal, target)).toBe(allowed);
    },
  );
});

describe('scopeFor', () => {
  it.each<[MaybeRole, string]>([
    ['viewer', 'openid api-keys:read'],
    ['editor', 'openid api-keys:read api-keys:write'],
    ['admin', 'openid api-keys:read api-keys:write api-keys:admin'],
    [null, 'openid'],
  ])('when the role is %s, then the scope is "%s"', (role, scope) => {
    expect(scopeFor(role)).toBe(scope);
  });
});
