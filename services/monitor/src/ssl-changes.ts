/**
 * What an ssl-scan run found against the previous one: the days left before expiry (alerting
 * once as each chosen threshold is crossed, and once on expiry), a change of grade, and a new
 * certificate (its SHA-256 fingerprint changed: renewed or replaced).
 */

/** The fields of an ssl-scan result (`data` of GET /v1/ssl-scan) a comparison reads. */
export interface SslScanResult {
  domain: string;
  daysUntilExpiry: number;
  isExpired?: boolean;
  securityGrade: string;
  certificate: { fingerprint256: string; valid_to: string; serialNumber?: string; issuer?: Record<string, string> };
}

/** Days before expiry that alert when a monitor names none (decision 0437). */
export const DEFAULT_EXPIRY_DAYS = [30, 14, 7, 1];

/** Grades from best to worst, as the scan gives them. */
const GRADE_ORDER = ['A+', 'A', 'A-', 'B', 'C', 'D', 'E', 'F', 'T', 'M'];

export interface SslChanges {
  kind: 'ssl-scan';
  daysUntilExpiry: number;
  /** The smallest threshold this run crossed (at or below it now, above it last run); null: none. */
  expiryThresholdCrossed: number | null;
  /** True when this run is the first to find the certificate expired. */
  expired: boolean;
  grade: { from: string; to: string; direction: 'better' | 'worse' } | null;
  newCertificate: { fromFingerprint256: string; toFingerprint256: string; validTo: string } | null;
  alert: boolean;
  /** One sentence per change, for alerts and the change log. */
  lines: string[];
}

const gradeRank = (grade: string) => {
  const rank = GRADE_ORDER.indexOf(grade);
  return rank === -1 ? GRADE_ORDER.length : rank;
};

const plural = (n: number, word: string) => `${n} ${word}${Math.abs(n) === 1 ? '' : 's'}`;

/**
 * Compares a run's ssl-scan result with the previous run's (undefined for a monitor's first run,
 * which alerts if it already starts inside a threshold). Thresholds are read in any order.
 */
export function compareSslScans(
  previous: SslScanResult | undefined,
  current: SslScanResult,
  expiryDays: readonly number[] = DEFAULT_EXPIRY_DAYS,
): SslChanges {
  const days = current.daysUntilExpiry;
  const before = previous?.daysUntilExpiry;
  const thresholds = [...(expiryDays.length ? expiryDays : DEFAULT_EXPIRY_DAYS)].sort((a, b) => a - b);
  const crossed = thresholds.find((t) => days <= t && (before === undefined || before > t)) ?? null;
  const isExpired = current.isExpired ?? days < 0;
  const wasExpired = previous ? (previous.isExpired ?? previous.daysUntilExpiry < 0) : false;
  const expired = isExpired && !wasExpired;

  let grade: SslChanges['grade'] = null;
  if (previous && previous.securityGrade !== current.securityGrade) {
    const worse = gradeRank(current.securityGrade) > gradeRank(previous.securityGrade);
    grade = { from: previous.securityGrade, to: current.securityGrade, direction: worse ? 'worse' : 'better' };
  }
  const from = previous?.certificate.fingerprint256;
  const to = current.certificate.fingerprint256;
  const newCertificate =
    from !== undefined && from !== to
      ? { fromFingerprint256: from, toFingerprint256: to, validTo: current.certificate.valid_to }
      : null;

  const lines: string[] = [];
  if (expired) lines.push(`The certificate of ${current.domain} has expired (${current.certificate.valid_to}).`);
  else if (crossed !== null)
    lines.push(
      `The certificate of ${current.domain} expires in ${plural(days, 'day')} (threshold ${plural(crossed, 'day')}).`,
    );
  if (grade) lines.push(`The grade of ${current.domain} went from ${grade.from} to ${grade.to} (${grade.direction}).`);
  if (newCertificate)
    lines.push(
      `${current.domain} serves a new certificate, valid to ${newCertificate.validTo} (${plural(days, 'day')} left).`,
    );

  const alert = expired || crossed !== null || grade?.direction === 'worse' || newCertificate !== null;
  return {
    kind: 'ssl-scan',
    daysUntilExpiry: days,
    expiryThresholdCrossed: crossed,
    expired,
    grade,
    newCertificate,
    alert,
    lines,
  };
}
