/**
 * Operations whose service answered "not available" lately (501 not_implemented, 503
 * service_unavailable): the index and the form say so before the next try, until a call succeeds
 * or a few minutes pass. Kept in sessionStorage, so every page of the visit knows.
 */
import { ApiError } from './api.js';

const KEY = 'wu-unavailable';
const REMEMBERED_MS = 5 * 60_000;
const UNAVAILABLE_CODES = new Set(['not_implemented', 'service_unavailable']);

function read(): Record<string, number> {
  try {
    return JSON.parse(sessionStorage.getItem(KEY) ?? '{}') as Record<string, number>;
  } catch {
    return {};
  }
}

/** The service is missing or down: not a busy browser pool or a full queue, which pass soon. */
export const isUnavailableError = (err: unknown): err is ApiError =>
  err instanceof ApiError && UNAVAILABLE_CODES.has(err.code);

export const isUnavailable = (operationId: string): boolean => (read()[operationId] ?? 0) > Date.now();

export function rememberAvailability(operationId: string, available: boolean): void {
  const all = read();
  if (available) delete all[operationId];
  else all[operationId] = Date.now() + REMEMBERED_MS;
  sessionStorage.setItem(KEY, JSON.stringify(all));
}
