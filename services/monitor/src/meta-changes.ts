/**
 * What a meta-scan run found against the previous one: each check whose status changed (a check
 * that got worse alerts) and the score and grade.
 */

export type CheckStatus = 'pass' | 'warning' | 'fail';

/** The fields of a meta-scan result (`data` of GET /v1/meta-scan) a comparison reads. */
export interface MetaScanResult {
  url: string;
  finalScore: number;
  grade: string;
  categories: { id: string; results: { id: string; value: string | null; status: CheckStatus; message: string }[] }[];
}

export interface CheckChange {
  category: string;
  id: string;
  /** null: the check was not in the previous run. */
  from: CheckStatus | null;
  /** null: the check is gone from this run. */
  to: CheckStatus | null;
  direction: 'better' | 'worse';
  message: string;
}

export interface MetaChanges {
  kind: 'meta-scan';
  score: { from: number | null; to: number };
  grade: { from: string | null; to: string };
  checks: CheckChange[];
  alert: boolean;
  lines: string[];
}

const RANK: Record<CheckStatus, number> = { pass: 0, warning: 1, fail: 2 };

const checksOf = (result: MetaScanResult) =>
  new Map(
    result.categories.flatMap((category) =>
      category.results.map((check) => [`${category.id}/${check.id}`, { category: category.id, ...check }] as const),
    ),
  );

/** Compares a run's meta-scan result with the previous run's (undefined for the first run: no changes). */
export function compareMetaScans(previous: MetaScanResult | undefined, current: MetaScanResult): MetaChanges {
  const score = { from: previous?.finalScore ?? null, to: current.finalScore };
  const grade = { from: previous?.grade ?? null, to: current.grade };
  if (!previous) return { kind: 'meta-scan', score, grade, checks: [], alert: false, lines: [] };

  const before = checksOf(previous);
  const after = checksOf(current);
  const checks: CheckChange[] = [];
  for (const [key, now] of after) {
    const then = before.get(key);
    if (then?.status === now.status) continue;
    // A check new to this run counts as worse only when it does not pass.
    const worse = then ? RANK[now.status] > RANK[then.status] : now.status !== 'pass';
    checks.push({
      category: now.category,
      id: now.id,
      from: then?.status ?? null,
      to: now.status,
      direction: worse ? 'worse' : 'better',
      message: now.message,
    });
  }
  for (const [key, then] of before) {
    if (after.has(key)) continue;
    checks.push({
      category: then.category,
      id: then.id,
      from: then.status,
      to: null,
      direction: 'better',
      message: '',
    });
  }

  const lines: string[] = [];
  if (score.from !== current.finalScore)
    lines.push(`The meta score of ${current.url} went from ${score.from} to ${current.finalScore} (${current.grade}).`);
  for (const change of checks)
    lines.push(
      change.to === null
        ? `${change.id}: no longer checked.`
        : `${change.id}: ${change.from ?? 'new'} → ${change.to}${change.message ? ` (${change.message})` : ''}.`,
    );
  const alert = checks.some((change) => change.direction === 'worse') || current.finalScore < previous.finalScore;
  return { kind: 'meta-scan', score, grade, checks, alert, lines };
}
