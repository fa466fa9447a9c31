import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { startTestApp, type TestApp } from '../../helpers/app';
import { CLI_CONTEXT } from '../../../src/shared/audit-context';

const run = promisify(execFile);
const DOC = path.resolve(__dirname, '..', '..', '..', 'docs', 'users.md');

/** The block of docs/users.md between its markers, without the fences, as a reader pastes it. */
function walkthrough(): string {
  const text = readFileSync(DOC, 'utf8');
  const block = text.slice(text.indexOf('<!-- users-walkthrough:start -->'), text.indexOf('<!-- users-walkthrough:end -->'));
  return block
    .split('\n')
    .filter((line) => !line.startsWith('<!--') && !line.startsWith('```'))
    .join('\n');
}

describe('docs/users.md: the curl walkthrough, pasted as written', () => {
  let t: TestApp;
  const password = 'the-first-admins-password';
  beforeAll(async () => {
    t = await startTestApp();
    await t.services.users.add('admin', password, 'admin', CLI_CONTEXT);
  });
  afterAll(() => t.close());

  it('when it is pasted twice against a service whose only admin is admin, then every line prints what its comment says, both times', async () => {
    const script = walkthrough();
    const expected = script
      .split('\n')
      .map((line) => / {4}# (.*)$/.exec(line)?.[1])
      .filter((comment): comment is string => comment !== undefined);
    // The service answers in this process: the shell must run beside it, not block it.
    const paste = () => {
      const shell = run('bash', ['-euo', 'pipefail', '-c', script.replace('BASE=http://localhost:3000', `BASE=${t.baseUrl}`)], { timeout: 60_000 });
      shell.child.stdin!.end(`${password}\n`);
      return shell;
    };

    for (let time = 0; time < 2; time++) {
      const { stdout } = await paste();
      expect(stdout.split('\n').filter(Boolean)).toEqual(expected);
    }
    expect(expected).toHaveLength(14);
  }, 90_000);
});
