/**
 * Billing announces on this NATS subject that an account's credentials or plan changed (a key
 * revoked, the password set, the plan changed): every edge then drops what it answers or pays for
 * from memory for that account (its views and credit leases), so the change holds at once on
 * every edge instead of within CALLER_VIEW_MS. The message is the account's rate subject as text.
 */
export const REVOCATIONS_SUBJECT = 'webutil.billing.revocations';

/** An account's rate subject: what billing counts its rate against and names in RateWindow.key. */
export const accountSubject = (accountId: string) => `account:${accountId}`;
