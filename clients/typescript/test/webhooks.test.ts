/**
 * verifyWebhook: a delivery signed as the edge signs it (Standard Webhooks, one `v1,` signature per
 * secret, the replaced secret's beside the new one during a rotation) verifies; an altered body, a
 * wrong secret or a stale timestamp does not.
 */
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import { verifyWebhook } from '../src/webhooks.js';

const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

function signed(secrets: string[], body: string, at = new Date()) {
  const id = `msg_${randomBytes(8).toString('hex')}`;
  const signature = secrets.map((secret) => new Webhook(secret).sign(id, at, body)).join(' ');
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signature,
  };
}

describe('verifyWebhook', () => {
  const body = JSON.stringify({ type: 'job.finished', data: { jobId: 'abc', status: 'done' } });

  it('returns the parsed envelope of a delivery signed with the secret, from a Headers or a plain object', () => {
    const secret = newSecret();
    const headers = signed([secret], body);
    expect(verifyWebhook(secret, body, headers)).to.deep.equal(JSON.parse(body));
    expect(verifyWebhook(secret, new TextEncoder().encode(body), new Headers(headers))).to.deep.equal(JSON.parse(body));
  });

  it('verifies with either secret while a rotation signs with both', () => {
    const [previous, current] = [newSecret(), newSecret()];
    const headers = signed([current, previous], body);
    expect(verifyWebhook(previous, body, headers)).to.deep.equal(JSON.parse(body));
    expect(verifyWebhook(current, body, headers)).to.deep.equal(JSON.parse(body));
  });

  it('refuses an altered body, another secret and a stale timestamp', () => {
    const secret = newSecret();
    const headers = signed([secret], body);
    expect(() => verifyWebhook(secret, body.replace('done', 'failed'), headers)).to.throw();
    expect(() => verifyWebhook(newSecret(), body, headers)).to.throw();
    const stale = signed([secret], body, new Date(Date.now() - 60 * 60 * 1000));
    expect(() => verifyWebhook(secret, body, stale)).to.throw();
  });
});
