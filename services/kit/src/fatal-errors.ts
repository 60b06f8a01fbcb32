import type { Logger } from './logger.js';
import { counter } from './metrics.js';

/** Exit status after an error nothing handled: EX_SOFTWARE, an internal software error. */
export const FATAL_EXIT_CODE = 70;

type FatalKind = 'unhandledRejection' | 'uncaughtException';

const fatalErrors = counter<'kind'>({
  name: 'webutil_fatal_errors_total',
  help: 'Errors nothing handled (a rejected promise nobody awaited, an exception thrown from a callback)',
  labelNames: ['kind'],
});

let installed = false;

/**
 * An error nothing handled leaves the process in a state nobody planned for, so it is not carried
 * on: it is counted, logged on one line (with the count, since the process and its metrics end
 * here), and the process exits non-zero at once, so its supervisor (Kubernetes, `npm start`'s
 * runner) starts a clean one. Calls in flight fail; the edge answers them, and any call until the
 * replacement is ready, with 503 and Retry-After. docs/decisions/0103-crash-policy.md.
 */
export function exitOnFatalErrors(log: Logger): void {
  if (installed) return;
  installed = true;
  let exiting = false;
  const fatal = (kind: FatalKind) => (err: unknown) => {
    fatalErrors.inc({ kind });
    if (exiting) return;
    exiting = true;
    void fatalErrors
      .get()
      .then(({ values }) => values.reduce((n, v) => n + v.value, 0))
      .catch(() => undefined)
      .then((count) => {
        // pino writes its buffer out when the process exits: the line is not lost.
        log.fatal(
          { err, kind, fatalErrors: count },
          `${kind}: an error nothing handled; exiting with status ${FATAL_EXIT_CODE}, for the supervisor to replace`,
        );
        process.exit(FATAL_EXIT_CODE);
      });
  };
  process.on('unhandledRejection', fatal('unhandledRejection'));
  process.on('uncaughtException', fatal('uncaughtException'));
}
