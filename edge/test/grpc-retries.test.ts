import { expect } from 'chai';
import { isRetried } from '../src/grpc-clients.js';

/** Issue 29, item 3: the edge retries UNAVAILABLE only for RPCs a second try cannot do twice. */
describe('which RPCs the edge retries', () => {
  it('tries starts, creations, reservations, rotations, claims, solutions, counts, sign-ups and sign-ins once', () => {
    for (const name of [
      'StartBrokenLinkCrawl',
      'StartLinkExtractCrawl',
      'CreateApiKey',
      'ClaimIdempotencyKey',
      'SolveChallenge',
      'CountRequests',
      'ReserveWebhookDelivery',
      'RotateWebhookSecret',
      'ClaimWebhookDeliveries',
      'SignUp',
      'SignIn',
    ]) {
      expect(isRetried(name), name).to.equal(false);
    }
  });

  it('retries reads, settlements and the edge-named authorization', () => {
    for (const name of [
      'Authorize',
      'AuthorizeBatch',
      'Settle',
      'GetBrokenLinkCrawl',
      'GetQuota',
      'DownCheck',
      'Screenshot',
      'ListApiKeys',
      'SignOut',
      'UpdateWebhookDelivery',
      'Started', // not a start: the rule reads words, not prefixes of words
    ]) {
      expect(isRetried(name), name).to.equal(true);
    }
  });
});
