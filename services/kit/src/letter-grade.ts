/**
 * The letter scale of the product's 0-100 scores (link health, meta audit), one definition so the
 * grades mean the same everywhere: A+ 97-100, A 90-96, B 80-89, C 70-79, D 60-69, F below 60.
 */
export function letterGrade(score: number): string {
  if (score >= 97) return 'A+';
  if (score >= 90) return 'A';
  if (score >= 80) return 'B';
  if (score >= 70) return 'C';
  if (score >= 60) return 'D';
  return 'F';
}
