import type { CaaRecord as DnsCaaRecord } from 'node:dns';
import dns from 'node:dns/promises';

export interface CaaRecord {
  critical: boolean;
  tag: string;
  value: string;
}

/** The CAA records that apply to a name: found on `domain` (undefined when none up the tree). */
export interface CaaPolicy {
  domain: string | undefined;
  records: CaaRecord[];
}

/** Names asked at most: a deeper name's higher parents are not asked, and the answer is then unknown. */
export const MAX_CAA_NAMES = 10;

/** The name and its parents, closest first, the bare top-level domain included (RFC 8659 3). */
export function caaNames(domain: string): string[] {
  const labels = domain.replace(/\.$/, '').toLowerCase().split('.');
  return labels.map((_, i) => labels.slice(i).join('.')).slice(0, MAX_CAA_NAMES);
}

/**
 * The CAA record set of the domain or its closest parent that has one (RFC 8659 3), all names
 * asked at once, within `timeoutMs` in all. Undefined when it cannot be told: a single-label
 * name on the system's resolver, a name deeper than MAX_CAA_NAMES labels with none found, a
 * lookup that failed (other than "no such name" or "no CAA record"), no answer in time, or
 * `signal` aborted. `servers`: DNS servers to ask, the system's when empty.
 */
export async function lookupCaa(
  domain: string,
  servers: readonly string[],
  timeoutMs: number,
  signal: AbortSignal,
): Promise<CaaPolicy | undefined> {
  // The system's resolver holds no CAA for a single-label name (localhost, an intranet host): no
  // public CA issues for one. A resolver of the operator's own (`servers`) is asked all the same.
  if (servers.length === 0 && !domain.replace(/\.$/, '').includes('.')) return undefined;
  const names = caaNames(domain);
  const resolver = new dns.Resolver({ timeout: Math.max(1, Math.floor(timeoutMs / 2)), tries: 2 });
  try {
    if (servers.length) resolver.setServers([...servers]);
  } catch {
    return undefined; // a malformed server setting: nothing can be asked
  }
  let timer: NodeJS.Timeout | undefined;
  let onAbort: () => void = () => undefined;
  const deadline = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMs);
    onAbort = () => resolve('timeout');
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    const answers = await Promise.race([
      Promise.all(
        names.map((name) =>
          resolver.resolveCaa(name).then(
            (records) => records,
            (err: NodeJS.ErrnoException) => (err.code === 'ENOTFOUND' || err.code === 'ENODATA' ? [] : undefined),
          ),
        ),
      ),
      deadline,
    ]);
    if (answers === 'timeout') return undefined;
    for (const [i, records] of answers.entries()) {
      if (records === undefined) return undefined; // a closer name's answer is unknown
      if (records.length) return { domain: names[i], records: records.map(recordOf) };
    }
    if (domain.replace(/\.$/, '').split('.').length > MAX_CAA_NAMES) return undefined;
    return { domain: undefined, records: [] };
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', onAbort);
    resolver.cancel();
  }
}

/** node:dns gives each record as `{critical, <tag>: value}`. */
function recordOf(record: DnsCaaRecord): CaaRecord {
  const { critical, ...rest } = record as DnsCaaRecord & Record<string, unknown>;
  const [tag, value] = Object.entries(rest)[0] ?? ['', ''];
  return { critical: critical !== 0 && critical !== undefined, tag, value: String(value) };
}
