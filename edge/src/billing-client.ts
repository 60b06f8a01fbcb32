import type { BillingServiceService } from '@webutil/proto/webutil/billing/v1/billing';
import { type CallOptions, NEVER_CANCELLED, type ServiceClient } from './grpc-clients.js';

export type BillingClient = ServiceClient<typeof BillingServiceService>;

/**
 * Deadline of every billing call: the edge's authorizations, settlements and request counts, and
 * the routes that are billing's own RPCs (sign-in, keys...). They are quick store operations (a
 * sign-in's password hash is ~0.1 s); the margin is for a loaded machine.
 */
export const BILLING_TIMEOUT_MS = 10_000;

/** Billing calls are short and must finish whoever has gone: nothing cancels them. */
export const billingCall = (requestId: string): CallOptions => ({
  requestId,
  timeoutMs: BILLING_TIMEOUT_MS,
  signal: NEVER_CANCELLED,
});
