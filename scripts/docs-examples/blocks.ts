/**
 * The shell examples of a Markdown page, and the bash script that runs them as a reader would paste
 * them (the convention is in scripts/docs-examples.ts and docs/development.md).
 */

export interface Block {
  /** The page, relative to the repository. */
  file: string;
  /** Line of the opening fence. */
  line: number;
  code: string;
  /** Why it is not run, from `<!-- not run: ... -->` just above it; undefined when it runs. */
  notRun?: string;
}

const SHELL = /^(sh|bash|shell)\b/;
const NOT_RUN = /^<!--\s*not run:\s*(.+?)\s*-->$/;

/** Every fenced shell block of a page, with its line and whether it runs. */
export function blocksOf(file: string, markdown: string): Block[] {
  const lines = markdown.split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = /^(\s*)(`{3,}|~{3,})\s*(.*)$/.exec(lines[i]!);
    if (!fence) continue;
    const [, indent, marker, info] = fence;
    const end = lines.findIndex((l, j) => j > i && l.trim() === marker);
    if (end < 0) throw new Error(`${file}:${i + 1}: a code block that never closes`);
    if (SHELL.test(info!)) {
      let above = i - 1;
      while (above >= 0 && lines[above]!.trim() === '') above--;
      const notRun = above >= 0 ? NOT_RUN.exec(lines[above]!.trim())?.[1] : undefined;
      const code = lines.slice(i + 1, end).map((l) => (l.startsWith(indent!) ? l.slice(indent!.length) : l)).join('\n');
      blocks.push({ file, line: i + 1, code, notRun });
    }
    i = end;
  }
  return blocks;
}

/** Where a shell comment starts on a line (a `#` after whitespace, outside quotes), or -1. */
export function commentStart(line: string): number {
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote) {
      if (c === '\\' && quote === '"') i++;
      else if (c === quote) quote = undefined;
    } else if (c === '\\') i++;
    else if (c === "'" || c === '"') quote = c;
    else if (c === '#' && (i === 0 || /\s/.test(line[i - 1]!))) return i;
  }
  return -1;
}

/** A command line with the output it claims, or undefined when it claims none. */
export function claimOf(line: string): { command: string; expected: string } | undefined {
  const at = commentStart(line);
  if (at <= 0 || line.slice(0, at).trim() === '') return undefined;
  return { command: line.slice(0, at).trimEnd(), expected: line.slice(at + 1).trim() };
}

const b64 = (text: string) => Buffer.from(text).toString('base64');

/** The block as the runner runs it: claims turned into checks; heredocs and continued lines left whole. */
function instrument(block: Block): string {
  const out: string[] = [];
  const lines = block.code.split('\n');
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i]!;
    const heredoc = /<<-?\s*['"]?(\w+)['"]?/.exec(line);
    if (heredoc) {
      const end = lines.findIndex((l, j) => j > i && l.trim() === heredoc[1]);
      out.push(...lines.slice(i, end + 1));
      i = end;
      continue;
    }
    while (line.endsWith('\\') && i + 1 < lines.length) line += `\n${lines[++i]}`;
    const claim = line.trimStart().startsWith('#') ? undefined : claimOf(line);
    if (!claim) {
      out.push(line);
      continue;
    }
    const where = `${block.file}:${block.line + 1 + i}`;
    out.push(`__claim ${b64(where)} ${b64(claim.expected)} "$( ${claim.command} )"`);
  }
  return out.join('\n');
}

/** The bash script of one page: its blocks in order, each twice, claims checked, pointed at the service started for them. */
export function scriptFor(blocks: Block[], service: { port: number; dataDir: string }): string {
  const aimed = (code: string) => code.replaceAll('localhost:3000', `localhost:${service.port}`).replace(/(^|[\s"'=(])data\//g, `$1${service.dataDir}/`);
  const parts = [
    'set -euo pipefail',
    // Which command stopped the page, in the words of the page (as the runner aimed it).
    `trap 'echo "failed (exit $?): $BASH_COMMAND" >&2' ERR`,
    // A claim's `...` stands for anything; the rest must be the command's output exactly.
    `__claim() {
  local where expected
  where=$(printf %s "$1" | base64 -d); expected=$(printf %s "$2" | base64 -d)
  if [[ "$expected" == *"..."* ]]; then
    local pattern=""; local rest="$expected"
    while [[ "$rest" == *"..."* ]]; do pattern+=$(printf %q "\${rest%%...*}")'*'; rest=\${rest#*...}; done
    pattern+=$(printf %q "$rest")
    eval "[[ \\"\\$3\\" == $pattern ]]" && { echo "  ok $where"; return 0; }
  elif [[ "$3" == "$expected" ]]; then echo "  ok $where"; return 0; fi
  printf '%s: claims\\n  %s\\nbut the output was\\n  %s\\n' "$where" "$expected" "$3" >&2
  exit 1
}`,
  ];
  for (const block of blocks) {
    const code = instrument({ ...block, code: aimed(block.code) });
    for (const time of ['first', 'second']) parts.push(`echo "### ${block.file}:${block.line} (${time} time)"`, code);
  }
  return `${parts.join('\n')}\n`;
}
