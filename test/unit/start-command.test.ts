import { readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

describe('the start command', () => {
  // The node flags (the heap ceilings and the garbage-collection flag, see docs/operations.md, "The node flags") are
  // part of how the service runs: an image that dropped them would not run as docs/performance.md ("memory") measured.
  it('the Docker image runs exactly npm start\'s command, flags included, without npm', () => {
    const start = (JSON.parse(read('package.json')) as { scripts: { start: string } }).scripts.start;
    const cmd = /^CMD (\[.*\])$/m.exec(read('Dockerfile'))?.[1];

    expect(start).toMatch(/^node (--[\w-]+(=\S+)? )*dist\/main\.js$/);
    expect(cmd && JSON.parse(cmd)).toEqual(start.split(' '));
  });
});
