/** The exit codes (documented in the README): what a CI job branches on. */
export const EXIT = {
  /** Done, nothing found. */
  ok: 0,
  /** Broken links (or a site down, an invalid certificate), or a grade below --fail-on. */
  found: 1,
  /** The command line was wrong (an unknown option, a missing file). */
  usage: 2,
  /** The API refused or failed, or could not be reached. */
  api: 3,
  /** Out of credits (402). */
  credits: 4,
} as const;

/** A command-line mistake found after parsing (a file that cannot be read). */
export class UsageError extends Error {
  override name = 'UsageError';
}
