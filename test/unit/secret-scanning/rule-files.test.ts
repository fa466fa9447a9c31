import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { parse as parseYaml } from 'yaml';
import { generateAppkey, isWellFormedAppkey } from '../../../src/api-keys/appkey';

/**
 * The detection rules shipped in docs/secret-scanning/, read from the files themselves. Neither
 * gitleaks nor TruffleHog is packaged here, so their Go (RE2) patterns run as JS RegExps.
 */
const RULES_DIR = join(__dirname, '../../../docs/secret-scanning');

/**
 * A Go RE2 pattern as a JS RegExp. Only what differs is translated: leading inline flags `(?i)`,
 * `(?s)`, `(?m)` become RegExp flags, `(?P<name>` becomes `(?<name>`, `\z` becomes `$`. Anything
 * else RE2 has and JS has not is refused, so a rule file the translation does not cover fails here.
 */
function fromRe2(pattern: string): RegExp {
  let source = pattern;
  let flags = 'g';
  const inline = /^\(\?([ism]+)\)/.exec(source);
  if (inline) {
    flags += inline[1]!;
    source = source.slice(inline[0].length);
  }
  source = source.replaceAll('(?P<', '(?<').replaceAll('\\z', '$');
  if (/\(\?[a-zA-Z-]+[:)]|\\[AQEpP]|\[\[:/.test(source)) throw new Error(`an RE2 construct this test does not translate: ${pattern}`);
  return new RegExp(source, flags);
}

function gitleaksRule(): { regex: RegExp; group: number } {
  const config = parseToml(readFileSync(join(RULES_DIR, 'gitleaks.toml'), 'utf8')) as { rules: { id: string; regex: string; secretGroup?: number; keywords: string[] }[] };
  const [rule] = config.rules;
  expect(config.rules).toHaveLength(1);
  expect(rule!.keywords).toEqual(['ak_']);
  return { regex: fromRe2(rule!.regex), group: rule!.secretGroup ?? 0 };
}

function truffleHogRule(): { regex: RegExp; group: number } {
  const config = parseYaml(readFileSync(join(RULES_DIR, 'trufflehog.yaml'), 'utf8')) as { detectors: { name: string; keywords: string[]; regex: Record<string, string> }[] };
  const [detector] = config.detectors;
  expect(config.detectors).toHaveLength(1);
  expect(detector!.keywords).toEqual(['ak_']);
  const patterns = Object.values(detector!.regex);
  expect(patterns).toHaveLength(1);
  // TruffleHog reports the first capture group when a pattern has one.
  return { regex: fromRe2(patterns[0]!), group: 1 };
}

/** Every secret the rule finds in `text`. */
const found = (rule: { regex: RegExp; group: number }, text: string) => [...text.matchAll(rule.regex)].map((m) => m[rule.group]);

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const keys = Array.from({ length: 500 }, generateAppkey);

describe.each([
  ['gitleaks (docs/secret-scanning/gitleaks.toml)', gitleaksRule],
  ['TruffleHog (docs/secret-scanning/trufflehog.yaml)', truffleHogRule],
])('the %s rule', (_name, load) => {
  const rule = load();

  it('when freshly generated keys stand in code, config or at the edges of a file, then each is found, whole', () => {
    for (const key of keys) {
      for (const text of [key, `API_KEY=${key}\n`, `const k = "${key}";`, `{"appkey":'${key}'}`, `Authorization: Basic x:${key}`]) {
        expect(found(rule, text)).toEqual([key]);
      }
    }
  });

  it('when keys follow one another, one a line or in a list, then each is found', () => {
    expect(found(rule, `${keys[0]}\n${keys[1]}\n${keys[2]}`)).toEqual([keys[0], keys[1], keys[2]]);
    expect(found(rule, `["${keys[0]}", "${keys[1]}"]`)).toEqual([keys[0], keys[1]]);
  });

  it('when a string is near a key but not one, then nothing is found: truncated, longer, another prefix, glued to more characters', () => {
    for (const key of keys.slice(0, 100)) {
      const nearMisses = [
        key.slice(0, -1),
        key.slice(0, 10),
        `${key}a`,
        `${key}-`,
        `x${key}`,
        `_${key}`,
        `AK_${key.slice(3)}`,
        `ak-${key.slice(3)}`,
        key.slice(0, 20) + '+' + key.slice(21),
      ];
      for (const text of nearMisses) expect(found(rule, `token: ${text}\n`)).toEqual([]);
    }
  });

  it('when the checksum or the last random character could never come out of generateAppkey, then nothing is found', () => {
    for (const key of keys.slice(0, 100)) {
      // A CRC32 in base62 starts with 0 to 4; base64url of 32 bytes ends in one of 16 characters.
      const checksumTooLarge = key.slice(0, -6) + '5' + key.slice(-5);
      const impossibleLast = key.slice(0, 45) + 'B' + key.slice(46);
      expect(isWellFormedAppkey(checksumTooLarge)).toBe(false);
      expect(found(rule, checksumTooLarge)).toEqual([]);
      expect(found(rule, impossibleLast)).toEqual([]);
    }
  });

  it('when a checksum is wrong but of the right shape, then the rule still matches: a CRC32 is beyond a regular expression (the service labels it false_positive)', () => {
    const key = keys[0]!;
    const last = key.at(-1)!;
    const wrong = key.slice(0, -1) + BASE62[(BASE62.indexOf(last) + 1) % 62];

    expect(isWellFormedAppkey(wrong)).toBe(false);
    expect(found(rule, wrong)).toEqual([wrong]);
  });
});
