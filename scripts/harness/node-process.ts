/**
 * The one way the tests, the benchmarks and the soak script run a server as a child process: spawn
 * `node [args] <script>` on a free loopback port (told through PORT), keep what it prints, wait
 * until a path answers 200, and stop it (SIGTERM, then SIGKILL after a grace) or kill it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import path from 'node:path';

export const REPOSITORY_ROOT = path.resolve(__dirname, '..', '..');

/** The service run from its TypeScript sources, as the tests and the soak script run it. */
export const SERVICE_FROM_SOURCE = { script: 'src/main.ts', nodeArgs: ['--import', 'tsx'] } as const;

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface StartOptions {
  /** Names the process in errors. */
  label: string;
  /** Relative to the repository root, or absolute. */
  script: string;
  /** Node flags before the script, e.g. ['--import', 'tsx'] or --cpu-prof. */
  nodeArgs?: readonly string[];
  /**
   * The process's whole environment besides PATH, HOME and PORT: nothing else of ours leaks in, so a
   * run is configured by exactly what its caller wrote. A value of undefined is left out.
   */
  env: Record<string, string | undefined>;
  /** Answers 200 once the process is ready, e.g. '/readyz'. */
  readyPath: string;
  /** 30 s unless given. */
  readyWithinMs?: number;
  /** Each whole line printed, stdout and stderr alike. */
  onLine?: (line: string) => void;
}

export interface NodeProcess {
  label: string;
  pid: number;
  port: number;
  /** `http://127.0.0.1:<port>` */
  baseUrl: string;
  /** Everything printed so far, stdout and stderr interleaved. */
  output: () => string;
  /** False once the process has exited. */
  running: () => boolean;
  /** Settles once the process has exited and its output is read to the end. */
  exited: Promise<Exit>;
  /** SIGTERM, then SIGKILL when still running after `graceMs` (15 s: the service's own 10 s SHUTDOWN_TIMEOUT and a margin). */
  stop: (graceMs?: number) => Promise<Exit & { ms: number }>;
  /** SIGKILL, and the exit. */
  kill: () => Promise<Exit>;
}

const started = new Set<ChildProcess>();

/** SIGKILLs every process started here that is still running: for exit and interrupt handlers, hence synchronous. */
export function killStartedProcesses(): void {
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

/** A loopback port nothing listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.unref();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/**
 * Starts the process and resolves once `readyPath` answers 200; rejects with its output if it exits
 * first or is not ready in time. The port is found free here and bound by the process a moment later:
 * on a busy machine something else may take it in between, so a start that fails on a port in use
 * is tried again on another port (three tries).
 */
export async function startNodeProcess(options: StartOptions): Promise<NodeProcess> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnFreePort(options);
    } catch (err) {
      if (attempt >= 3 || !/port \d+ on \S+ is already in use/.test(String(err))) throw err;
    }
  }
}

async function startOnFreePort(options: StartOptions): Promise<NodeProcess> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, ...options.env, PORT: String(port) };
  for (const name of Object.keys(env)) if (env[name] === undefined) delete env[name];
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), options.script], {
    cwd: REPOSITORY_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.add(child);

  let output = '';
  let ended = false;
  child.once('exit', () => (ended = true));
  for (const stream of [child.stdout, child.stderr]) {
    let partial = '';
    stream.setEncoding('utf8');
    stream.on('data', (text: string) => {
      output += text;
      if (!options.onLine) return;
      const lines = (partial + text).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) options.onLine(line);
    });
    stream.on('end', () => {
      if (partial) options.onLine?.(partial);
    });
  }
  const exited = new Promise<Exit>((resolve) => {
    // 'close', not 'exit': by then everything the process printed has been read.
    child.once('close', (code, signal) => resolve({ code, signal }));
    child.once('error', (err) => {
      ended = true;
      output += `\n[${options.label}: ${err.message}]\n`;
      resolve({ code: null, signal: null });
    });
  }).finally(() => started.delete(child));

  const handle: NodeProcess = {
    label: options.label,
    pid: child.pid ?? 0,
    port,
    baseUrl: `http://127.0.0.1:${port}`,
    output: () => output,
    running: () => !ended,
    exited,
    async stop(graceMs = 15_000) {
      const from = Date.now();
      if (handle.running()) child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      const exit = await exited;
      clearTimeout(killer);
      return { ...exit, ms: Date.now() - from };
    },
    async kill() {
      if (handle.running()) child.kill('SIGKILL');
      return exited;
    },
  };

  try {
    await waitUntilReady(handle, options.readyPath, options.readyWithinMs ?? 30_000);
  } catch (err) {
    await handle.kill();
    throw err;
  }
  return handle;
}

async function waitUntilReady(server: NodeProcess, readyPath: string, withinMs: number): Promise<void> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    if (!server.running()) {
      const { code, signal } = await server.exited;
      throw new Error(`${server.label} exited during start (code ${code}, signal ${signal}):\n${server.output()}`);
    }
    if (await answers200(`${server.baseUrl}${readyPath}`)) return;
    if (Date.now() > deadline) throw new Error(`${server.label} did not answer 200 on ${readyPath} within ${withinMs / 1000} s:\n${server.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function answers200(url: string): Promise<boolean> {
  try {
    // A probe stuck on a half-started server must not hold the loop past the deadline.
    const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
    // Read to the end, so the connection goes back to the pool instead of lingering.
    await res.arrayBuffer();
    return res.status === 200;
  } catch {
    return false; // not listening yet
  }
}
