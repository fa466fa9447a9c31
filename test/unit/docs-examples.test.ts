import { spawnSync } from 'node:child_process';
import { blocksOf, claimOf, scriptFor } from '../../scripts/docs-examples/blocks';

/** The convention of docs/development.md, "Writing docs examples", as the runner reads it. */
const page = [
  '# A page',
  '',
  '```sh',
  'X=1',
  "echo 'a # inside quotes'",
  'echo "$X"   # 1',
  '```',
  '',
  '<!-- not run: needs Docker -->',
  '```bash',
  'docker compose up',
  '```',
  '',
  '```js',
  'console.log(1) // not shell',
  '```',
].join('\n');

const run = (code: string) =>
  spawnSync('bash', ['-c', scriptFor([{ file: 'page.md', line: 1, code }], { port: 3000, dataDir: '/tmp/data' })], { encoding: 'utf8' });

describe('docs examples: the blocks of a page', () => {
  it('when a page is read, then its shell blocks are found with their lines, and a not-run mark is kept with its reason', () => {
    const blocks = blocksOf('page.md', page);

    expect(blocks.map((b) => [b.line, b.notRun])).toEqual([
      [3, undefined],
      [10, 'needs Docker'],
    ]);
    expect(blocks[0]!.code.split('\n')).toHaveLength(3);
  });

  it('when a line ends in a comment outside quotes, then that comment is the output it claims', () => {
    expect(claimOf('echo "$X"   # 1')).toEqual({ command: 'echo "$X"', expected: '1' });
    expect(claimOf("echo 'a # inside quotes'")).toBeUndefined();
    expect(claimOf('curl -s "$BASE/x#y"')).toBeUndefined();
    expect(claimOf('# a comment line')).toBeUndefined();
  });

  it('when a block\'s claims hold, then it runs twice and says so for each claim each time', () => {
    const result = run('X=1\necho "$X"   # 1\necho \'{"a":1,"b":2}\'   # {"a":1,...}');

    expect(result.status).toBe(0);
    expect(result.stdout.match(/ok page\.md:3/g)).toHaveLength(2);
    expect(result.stdout.match(/ok page\.md:4/g)).toHaveLength(2);
  });

  it('when a claim does not hold, then the run fails naming the line, the claim and the output', () => {
    const result = run('echo 2   # 1');

    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain('page.md:2: claims\n  1\nbut the output was\n  2');
  });

  it('when a command fails, then the run fails naming it', () => {
    const result = run('false\necho never');

    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain('failed (exit 1): false');
  });

  it('when a block names localhost:3000 and data/, then they point at the service the runner started', () => {
    const script = scriptFor([{ file: 'p.md', line: 1, code: 'curl http://localhost:3000/x\ncat data/first-admin-password' }], { port: 4321, dataDir: '/tmp/d' });

    expect(script).toContain('curl http://localhost:4321/x');
    expect(script).toContain('cat /tmp/d/first-admin-password');
  });
});
