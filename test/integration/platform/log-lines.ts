export interface RequestLine {
  method: string;
  path: string;
  status: number;
  id: string;
  level: number;
}

/** Every JSON log line written so far, parsed (lines that are not JSON are skipped). */
export function parseLogLines(raw: string): Record<string, unknown>[] {
  const lines: Record<string, unknown>[] = [];
  for (const line of raw.split('\n')) {
    if (!line.trim()) continue;
    try {
      lines.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      // Not a JSON line; the secret scans read the raw text anyway.
    }
  }
  return lines;
}

/** The one-per-request lines: method, path, status and request id. */
export function requestLines(raw: string): RequestLine[] {
  const out: RequestLine[] = [];
  for (const line of parseLogLines(raw)) {
    const req = line.req as { method?: unknown; path?: unknown; id?: unknown } | undefined;
    const res = line.res as { status?: unknown } | undefined;
    if (!req || !res || typeof req.method !== 'string' || typeof res.status !== 'number') continue;
    out.push({ method: req.method, path: String(req.path), status: res.status, id: String(req.id), level: Number(line.level) });
  }
  return out;
}
