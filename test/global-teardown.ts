export default async function globalTeardown(): Promise<void> {
  // Nothing to stop when the suite runs on an external server.
}
