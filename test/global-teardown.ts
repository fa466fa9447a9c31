import type { TestDatabase } from './test-database';

export default async function globalTeardown(): Promise<void> {
  await (globalThis as { __testDatabase__?: TestDatabase }).__testDatabase__?.stop();
}
