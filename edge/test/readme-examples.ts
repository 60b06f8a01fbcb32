/**
 * The README's shell examples as a script, and their shown outputs as checks (readme.e2e.test.ts).
 *
 * In a shell block every full-line comment is the output of the command above it: `# {…}` (or
 * `# [`, `# "`) starts a JSON value, which may continue on `#   ` lines; any other `# text` is a
 * line of text. Prose goes outside the blocks. In a shown value, `…` inside a string stands for
 * any characters (`"wu_live_…"`), and `"…"` as an array's last element for further elements; the
 * fields of VOLATILE differ from run to run, so only their kind is compared.
 */

/** The fence languages that mark a shell block. */
export const SHELL_LANGUAGES = ['sh', 'bash', 'shell', 'console'];

export interface FencedBlock {
  language: string;
  /** The `## ` heading the block is under. */
  section: string;
  body: string;
}

export interface Example {
  /** One logical command (backslash continuations joined as written). */
  command: string;
  /** What the README shows it printing: JSON values and text lines, in order. */
  shown: Shown[];
}

export type Shown = { json: unknown; text: string } | { line: string };

/** Every fenced block of a markdown document, with the section it is in. */
export function fencedBlocks(markdown: string): FencedBlock[] {
  const blocks: FencedBlock[] = [];
  let section = '';
  let open: { language: string; lines: string[] } | undefined;
  for (const line of markdown.split('\n')) {
    if (open) {
      if (/^```\s*$/.test(line)) {
        blocks.push({ language: open.language, section, body: open.lines.join('\n') });
        open = undefined;
      } else open.lines.push(line);
    } else if (line.startsWith('```')) open = { language: line.slice(3).trim(), lines: [] };
    else if (line.startsWith('## ')) section = line.slice(3).trim();
  }
  if (open) throw new Error('the README has an unclosed code block');
  return blocks;
}

/** A block's commands with the outputs shown under each. */
export function examples(block: string): Example[] {
  const found: Example[] = [];
  const lines = block.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    if (line.trim() === '') continue;
    if (line.startsWith('#')) {
      const last = found.at(-1);
      if (!last) throw new Error(`a comment with no command above it: ${line}`);
      const text = line.replace(/^#\s?/, '');
      const previous = last.shown.at(-1);
      if (/^ {2,}\S/.test(text) && previous && 'json' in previous) previous.text += text.trim();
      else if (/^[{["]/.test(text)) last.shown.push({ json: undefined, text });
      else last.shown.push({ line: text });
      continue;
    }
    let command = line;
    while (command.endsWith('\\') && i + 1 < lines.length) command += `\n${lines[++i]}`;
    found.push({ command, shown: [] });
  }
  for (const example of found) {
    for (const shown of example.shown) {
      if (!('json' in shown)) continue;
      try {
        shown.json = JSON.parse(shown.text);
      } catch (err) {
        throw new Error(`a shown output is not JSON (${(err as Error).message}): ${shown.text}`);
      }
    }
  }
  return found;
}

const marker = (kind: 'start' | 'end', n: number) => `@@readme-output-${kind}-${n}@@`;

/** The examples as one script that marks where each shown output starts and ends. */
export function markedScript(all: Example[]): string {
  return all
    .map((example, n) =>
      example.shown.length
        ? [`printf '\\n${marker('start', n)}\\n'`, example.command, `printf '\\n${marker('end', n)}\\n'`].join('\n')
        : example.command,
    )
    .join('\n');
}

/** What each example with a shown output printed, by its index. */
export function outputsOf(stdout: string, all: Example[]): Map<number, string[]> {
  const outputs = new Map<number, string[]>();
  all.forEach((example, n) => {
    if (!example.shown.length) return;
    const start = stdout.indexOf(`${marker('start', n)}\n`);
    const end = stdout.indexOf(`\n${marker('end', n)}`);
    if (start < 0 || end < start) throw new Error(`no output captured for: ${example.command}`);
    const text = stdout.slice(start + marker('start', n).length + 1, end);
    outputs.set(
      n,
      text.split('\n').filter((line) => line.trim() !== ''),
    );
  });
  return outputs;
}

/** Fields whose values change from run to run: ids, secrets, times, sizes, certificate details. */
export const VOLATILE = new Set([
  'id',
  'jobId',
  'key',
  'prefix',
  'apiKey',
  'csrfToken',
  'createdAt',
  'lastUsedAt',
  'revokedAt',
  'scannedAt',
  'at',
  'cycleEnds',
  'filename',
  'responseTimeMs',
  'dnsMs',
  'connectMs',
  'tlsMs',
  'firstByteMs',
  'totalMs',
  'durationMs',
  'resolveMs',
  'handshakeMs',
  'probesMs',
  'chainMs',
  'homePageMs',
  'caaMs',
  'cipherSuitesMs',
  'vulnerabilitiesMs',
  'revocationMs',
  'sizeBytes',
  'fingerprint',
  'fingerprint256',
  'serialNumber',
  'valid_from',
  'valid_to',
  'daysUntilExpiry',
]);

/** How a shown value differs from the real one; empty when it matches. */
export function differences(shown: unknown, real: unknown, path = '', volatile = false): string[] {
  const at = path || '(value)';
  if (typeof shown === 'string' && shown.includes('…')) {
    if (typeof real !== 'string') return [`${at}: shown a string, got ${JSON.stringify(real)}`];
    return wildcard(shown).test(real) ? [] : [`${at}: shown ${JSON.stringify(shown)}, got ${JSON.stringify(real)}`];
  }
  if (Array.isArray(shown)) {
    if (!Array.isArray(real)) return [`${at}: shown an array, got ${JSON.stringify(real)}`];
    const open = shown.at(-1) === '…';
    const items = open ? shown.slice(0, -1) : shown;
    if (open ? real.length < items.length : real.length !== items.length)
      return [`${at}: shown ${items.length}${open ? ' or more' : ''} items, got ${real.length}`];
    return items.flatMap((item, i) => differences(item, real[i], `${path}[${i}]`, volatile));
  }
  if (shown !== null && typeof shown === 'object') {
    if (real === null || typeof real !== 'object' || Array.isArray(real))
      return [`${at}: shown an object, got ${JSON.stringify(real)}`];
    const shownKeys = Object.keys(shown);
    const realKeys = Object.keys(real);
    const missing = realKeys.filter((k) => !shownKeys.includes(k));
    const extra = shownKeys.filter((k) => !realKeys.includes(k));
    if (missing.length || extra.length)
      return [`${at}: fields not shown ${JSON.stringify(missing)}, shown but absent ${JSON.stringify(extra)}`];
    return shownKeys.flatMap((k) =>
      differences(
        (shown as Record<string, unknown>)[k],
        (real as Record<string, unknown>)[k],
        `${path}.${k}`,
        VOLATILE.has(k),
      ),
    );
  }
  if (volatile) {
    const kind = (v: unknown) => (v === null ? 'null' : typeof v);
    return kind(shown) === kind(real) ? [] : [`${at}: shown a ${kind(shown)}, got ${JSON.stringify(real)}`];
  }
  return shown === real ? [] : [`${at}: shown ${JSON.stringify(shown)}, got ${JSON.stringify(real)}`];
}

/** A shown line of text matches a real one with `…` standing for any characters. */
export const lineMatches = (shown: string, real: string) => wildcard(shown.trim()).test(real.trim());

const wildcard = (shown: string) =>
  new RegExp(
    `^${shown
      .split('…')
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
    's',
  );
