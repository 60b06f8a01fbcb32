import { letterGrade } from '@webutil/kit';
import type { MetaCategory, MetaCheck, MetaScanResponse } from '@webutil/proto/webutil/metascan/v1/metascan';
import { type AuditInput, CATEGORY_ORDER, CHECKS } from './checks.js';

/** Credit a check earns of its weight: a warning passed with a caveat, so it earns half. */
const CREDIT: Record<string, number> = { pass: 1, warning: 0.5, fail: 0 };

/** Runs every check and adds them up: categories in the spec's order, score, grade and summary. */
export function scorecard(
  input: AuditInput,
): Pick<MetaScanResponse, 'finalScore' | 'grade' | 'categories' | 'summary'> {
  const results = CHECKS.map((check) => ({ check, result: { id: check.id, ...check.run(input) } as MetaCheck }));
  const categories: MetaCategory[] = CATEGORY_ORDER.map((id) => ({
    id,
    results: results.filter((r) => r.check.category === id).map((r) => r.result),
  }));
  const total = CHECKS.reduce((sum, c) => sum + c.weight, 0);
  const earned = results.reduce((sum, { check, result }) => sum + check.weight * (CREDIT[result.status] ?? 0), 0);
  const finalScore = Math.round((100 * earned) / total);
  const count = (status: string) => results.filter((r) => r.result.status === status).length;
  return {
    finalScore,
    grade: letterGrade(finalScore),
    categories,
    summary: { critical: count('fail'), warnings: count('warning'), passed: count('pass'), total: results.length },
  };
}
