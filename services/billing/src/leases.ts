/** Most credits one lease holds. */
const MAX_LEASE_CREDITS = 100;
/**
 * Fewest: a caller with less than 20 times this left has every call held on its own, so near the
 * end of a balance no call is refused while credits sit unused in a lease.
 */
const MIN_LEASE_CREDITS = 16;
/**
 * A lease holds at most this fraction of what the caller has left, so the account's other
 * credentials (and other edges) still find credits while it is open.
 */
const LEASE_SHARE = 1 / 20;

/**
 * The credits a lease holds for a caller with `remaining` credits left, on a call of
 * `callCredits` it pays first; 0: no lease, the call is held on its own. A lease pays that call
 * and at least as many again.
 */
export function leaseCredits(remaining: number, callCredits: number): number {
  const size = Math.min(MAX_LEASE_CREDITS, Math.floor(remaining * LEASE_SHARE));
  return size >= Math.max(MIN_LEASE_CREDITS, 2 * callCredits) ? size : 0;
}
