import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';

/**
 * Reads a secret without it ever touching argv: from a hidden prompt on a terminal, or the first
 * line of piped standard input (`printf '%s\n' "$PW" | npm run cli -- users add alice`).
 */
export async function readSecret(prompt: string): Promise<string> {
  if (!process.stdin.isTTY) {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8').split(/\r?\n/)[0] ?? '';
  }
  let muted = false;
  const output = new Writable({
    write(chunk: Buffer, _enc, done) {
      if (!muted) process.stderr.write(chunk);
      done();
    },
  });
  const rl = createInterface({ input: process.stdin, output, terminal: true });
  try {
    return await new Promise<string>((resolve) => {
      rl.question(prompt, (answer) => {
        process.stderr.write('\n');
        resolve(answer);
      });
      muted = true;
    });
  } finally {
    rl.close();
  }
}
