import { AllowedAddresses, clientAddress, clientAddressText, parseAllowedEntry } from '../../src/key-policies/addresses';
import { KeyJudge, standingOf } from '../../src/key-policies/key-judge';
import { OPEN_POLICY, secondsToRefill, type KeyPolicy } from '../../src/key-policies/policy';
import { MemoryKeyRateCounter } from '../../src/key-policies/rate-counter';

const NOW = Date.UTC(2030, 5, 15, 12) / 1000;
const policy = (p: Partial<KeyPolicy>): KeyPolicy => ({ ...OPEN_POLICY, ...p });

describe('key policies: allowed addresses', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7/32'],
    ['10.0.0.0/8', '10.0.0.0/8'],
    ['2001:db8::/32', '2001:db8::/32'],
    ['::ffff:203.0.113.0/120', '203.0.113.0/24'],
    ['0.0.0.0/0', '0.0.0.0/0'],
  ])('when %s is given, then it is kept, normalised as %s for SQL', (entry, normalised) => {
    expect(parseAllowedEntry(entry)).toMatchObject({ normalised });
  });

  it.each(['10.0.0.1/8', '2001:db8::1/32', '010.0.0.1', '1.2.3', '10.0.0.256', 'fe80::1%eth0', '10.0.0.0/33', '10.0.0.0/08', '::/129', 'localhost', '', ' 10.0.0.1'])(
    'when %p is given, then it is refused',
    (entry) => {
      expect(parseAllowedEntry(entry)).toHaveProperty('problem');
    },
  );

  it('when a caller is compared, then IPv4-mapped IPv6 counts as IPv4, families never match across, and an unknown caller matches only an empty list', () => {
    const list = AllowedAddresses.of(['10.0.0.0/8', '2001:db8::/32']);

    expect(list.allows(clientAddress('10.1.2.3'))).toBe(true);
    expect(list.allows(clientAddress('::ffff:10.1.2.3'))).toBe(true);
    expect(list.allows(clientAddress('2001:db8:ffff::1'))).toBe(true);
    expect(list.allows(clientAddress('11.0.0.1'))).toBe(false);
    expect(list.allows(clientAddress('::ffff:11.0.0.1'))).toBe(false);
    expect(list.allows(clientAddress(undefined))).toBe(false);
    expect(AllowedAddresses.of([]).allows(undefined)).toBe(true);
  });
});

describe('key policies: the caller\'s address as SQL compares it', () => {
  it.each([
    ['127.0.0.1', '127.0.0.1'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['::FFFF:10.0.0.1', '10.0.0.1'],
    ['2001:db8::1', '2001:db8::1'],
    ['010.0.0.1', null],
    ['1.2.3', null],
    ['256.0.0.1', null],
    ['not-an-address', null],
    ['', null],
  ])('when req.ip is %p, then inet gets %p', (ip, text) => {
    expect(clientAddressText(ip)).toBe(text);
  });
});

describe('key policies: the judge', () => {
  it('when a key fails several checks, then the first in the contract order is named: off, idle, expired, address', () => {
    const everything = policy({
      enabled: false,
      idle: { maxDays: 1, since: NOW - 2 * 86_400 },
      expiresAt: NOW,
      addresses: AllowedAddresses.of(['192.0.2.1']),
    });
    const from = clientAddress('198.51.100.1');

    expect(standingOf(everything, NOW, from)).toBe('disabled');
    expect(standingOf({ ...everything, enabled: true }, NOW, from)).toBe('idle');
    expect(standingOf({ ...everything, enabled: true, idle: null }, NOW, from)).toBe('expired');
    expect(standingOf({ ...everything, enabled: true, idle: null, expiresAt: NOW + 1 }, NOW, from)).toBe('address_not_allowed');
    expect(standingOf({ ...everything, enabled: true, idle: null, expiresAt: NOW + 1 }, NOW, false)).toBeUndefined();
  });

  it('when a use is judged twice (a kept copy, then a fresh one), then it counts once against the rate limit', async () => {
    const counter = new MemoryKeyRateCounter();
    const judge = new KeyJudge(counter, () => NOW);
    const limited = policy({ rateLimit: { limit: 1, windowSeconds: 60 } });

    const use = judge.use();
    const first = await use.judge('k', limited, undefined);
    const again = await use.judge('k', limited, undefined);
    const next = await judge.use().judge('k', limited, undefined);

    expect(first).toEqual({ admitted: true, rate: { limit: 1, remaining: 0, reset: Math.floor(NOW / 60) * 60 + 60 } });
    expect(again).toEqual(first);
    expect(next).toMatchObject({ admitted: false, reason: 'rate_limited', retryAfter: Math.floor(NOW / 60) * 60 + 60 - NOW });
  });

  it('when a key is off, then its use still counts against its rate limit', async () => {
    const judge = new KeyJudge(new MemoryKeyRateCounter(), () => NOW);
    const off = policy({ enabled: false, rateLimit: { limit: 1, windowSeconds: 60 } });

    await judge.use().judge('k', off, undefined);
    const onAgain = await judge.use().judge('k', { ...off, enabled: true }, undefined);

    expect(onAgain).toMatchObject({ admitted: false, reason: 'rate_limited' });
  });

  it('when a window ends, then the count starts again', async () => {
    let now = 600;
    const judge = new KeyJudge(new MemoryKeyRateCounter(), () => now);
    const limited = policy({ rateLimit: { limit: 1, windowSeconds: 60 } });

    await judge.use().judge('k', limited, undefined);
    now = 659;
    const sameWindow = await judge.use().judge('k', limited, undefined);
    now = 660;
    const nextWindow = await judge.use().judge('k', limited, undefined);

    expect(sameWindow.admitted).toBe(false);
    expect(nextWindow.admitted).toBe(true);
  });
});

describe('key policies: in-memory rate counters', () => {
  it('when more keys are counted than the bound, then the counter used longest ago is forgotten and memory stays bounded', async () => {
    const counter = new MemoryKeyRateCounter(3);

    for (const key of ['a', 'b', 'c']) await counter.hit(key, 60, 1);
    await counter.hit('a', 60, 1);
    await counter.hit('d', 60, 1);

    expect(counter.size).toBe(3);
    expect(await counter.hit('a', 60, 1)).toBe(3);
    expect(await counter.hit('b', 60, 1)).toBe(1);
  });
});

describe('key policies: refills', () => {
  it.each([
    ['day', Date.UTC(2030, 5, 15, 23, 59, 59), 1],
    ['day', Date.UTC(2030, 5, 15, 0, 0, 0), 86_400],
    ['month', Date.UTC(2030, 1, 28, 23, 0, 0), 3600],
    ['month', Date.UTC(2030, 11, 31, 23, 59, 59), 1],
  ] as const)('when credits refill every %s, then from %d the next refill is %i s away', (interval, at, seconds) => {
    expect(secondsToRefill(interval, at / 1000)).toBe(seconds);
  });
});
