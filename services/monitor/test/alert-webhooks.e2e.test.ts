import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { credentials } from '@grpc/grpc-js';
import { AddressPolicy, createLogger, SafeHttp } from '@webutil/kit';
import { createMailer } from '@webutil/kit/mail';
import { WebhookServiceClient } from '@webutil/proto/webutil/billing/v1/webhooks';
import { account } from '@webutil/scripts/test-accounts';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import { AlertDelivery, webhookBooksOf } from '../src/alert-delivery.js';
import type { AlertInput } from '../src/alert-messages.js';
import type { MonitorRecord } from '../src/store/store.js';
import { AlertReceiver } from './alert-receiver.js';

const log = createLogger('alert-test', 'silent');
const post = (body: unknown) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

/**
 * Issue 40: a monitor's signed webhook alerts go through job webhooks' machinery: billing books the
 * delivery with its body, the edge's worker signs it with the account's secret and POSTs it, and the
 * attempt is listed; the receiver verifies it as the docs tell customers to.
 */
describe('alert delivery: signed webhooks through billing and the edge’s delivery worker', function () {
  this.timeout(180_000);
  let stack: TestStack;
  let receiver: AlertReceiver;
  let client: WebhookServiceClient;
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'alert-webhooks-'));

  before(async () => {
    receiver = await AlertReceiver.start();
    stack = await startTestStack({
      allowTargets: '127.0.0.0/8',
      envFor: { edge: { WEBHOOK_TICK_MS: '100', WEBHOOK_RETRY_BASE_MS: '200' } },
    });
    client = new WebhookServiceClient(`127.0.0.1:${stack.ports.billing}`, credentials.createInsecure());
  });
  after(async () => {
    client?.close();
    await stack?.stop();
    await receiver?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('creates a monitor with a webhookUrl, delivers its alert signed, retried after a 503 and listed', async () => {
    const secret = ((await (await stack.api('/v1/webhooks/secret', post({}))).json()) as any).data.secret as string;
    const created = await stack.api(
      '/v1/monitors',
      post({
        name: 'Shop',
        kind: 'down-check',
        input: { url: 'https://example.com/' },
        intervalSeconds: 300,
        alerts: { webhookUrl: `${receiver.url}/hook` },
      }),
    );
    expect(created.status).to.equal(201);
    const monitor = ((await created.json()) as any).data;
    expect(monitor.alerts).to.include({ webhook: true, webhookUrl: `${receiver.url}/hook` });

    const record = {
      id: monitor.id,
      subject: `account:${stack.account.id}`,
      name: monitor.name,
      kind: monitor.kind,
      alertsJson: JSON.stringify(monitor.alerts),
    } as MonitorRecord;
    const alert: AlertInput = {
      event: 'incident.opened',
      at: new Date().toISOString(),
      monitor: { id: monitor.id, name: 'Shop', kind: 'down-check', target: 'https://example.com/' },
      lines: ['HTTP 503 three times in a row'],
      incident: { id: 'inc_1', openedAt: new Date().toISOString(), durationSeconds: 0, reason: 'HTTP 503' },
      links: { monitor: `${stack.edgeUrl}/monitors#${monitor.id}` },
    };
    receiver.answers.set('/hook', [503]);
    const delivery = new AlertDelivery({
      webhooks: webhookBooksOf(client),
      mailer: createMailer({ from: 'alerts@webutil.test', dataDir, log }),
      http: new SafeHttp({ policy: new AddressPolicy(['127.0.0.0/8']) }),
      log,
    });
    await delivery.deliver(record, alert);

    const [first, second] = await receiver.waitFor('/hook', 2, 60_000);
    expect(second?.body).to.equal(first?.body);
    expect(second?.headers['webhook-id']).to.equal(first?.headers['webhook-id']);
    expect(second?.headers['x-webutil-job-id']).to.equal(monitor.id);
    const verified = new Webhook(secret).verify(second?.body ?? '', second?.headers as Record<string, string>) as {
      type: string;
      title: string;
      lines: string[];
    };
    expect(verified).to.include({ type: 'monitor.incident.opened', title: 'Down: Shop (https://example.com/)' });
    expect(verified.lines).to.deep.equal(['HTTP 503 three times in a row']);
    expect(() => new Webhook(secret).verify(`${second?.body} `, second?.headers as Record<string, string>)).to.throw();

    const attempts = ((await (await stack.api('/v1/webhooks/deliveries')).json()) as any).data.attempts as {
      jobId: string;
      outcome: string;
    }[];
    const mine = attempts.filter((a) => a.jobId === monitor.id).map((a) => a.outcome);
    expect(mine).to.have.members(['retrying', 'delivered']);
  });

  it('refuses a webhookUrl the policy refuses, and webhook true without one, creating nothing', async () => {
    const count = async () => ((await (await stack.api('/v1/monitors')).json()) as any).data.monitors.length as number;
    const before = await count();
    const base = { name: 'x', kind: 'down-check', input: { url: 'https://example.com/' }, intervalSeconds: 300 };
    const blocked = await stack.api('/v1/monitors', post({ ...base, alerts: { webhookUrl: 'http://10.0.0.1/h' } }));
    expect(blocked.status).to.equal(400);
    expect(((await blocked.json()) as any).error.code).to.equal('invalid_webhook_url');
    const bare = await stack.api('/v1/monitors', post({ ...base, alerts: { webhook: true } }));
    expect(bare.status).to.equal(400);
    expect(((await bare.json()) as any).error.message).to.include('alerts.webhook needs alerts.webhookUrl');
    expect(await count()).to.equal(before);
  });

  it(
    'refuses the webhook channel to an account without a signing ' + 'secret, on create and change, until it has one',
    async () => {
      const { apiKey } = await account(stack, 'STARTER');
      const api = (route: string, init: RequestInit = {}) => stack.api(route, { apiKey, ...init });
      const patch = (body: unknown) => ({ ...post(body), method: 'PATCH' });
      const list = async () => ((await (await api('/v1/monitors')).json()) as any).data.monitors as { id: string }[];
      const base = { name: 'Hooked', kind: 'down-check', input: { url: 'https://example.com/' }, intervalSeconds: 300 };
      const hook = `${receiver.url}/hook`;
      const expectSecretMissing = async (res: Response) => {
        const body = (await res.json()) as any;
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(body.success).to.equal(false);
        expect(body.error.code).to.equal('webhook_secret_missing');
        expect(body.error.message).to.include('POST /v1/webhooks/secret');
      };

      await expectSecretMissing(await api('/v1/monitors', post({ ...base, alerts: { webhookUrl: hook } })));
      await expectSecretMissing(
        await api('/v1/monitors', post({ ...base, alerts: { webhook: true, webhookUrl: hook, emails: ['a@b.test'] } })),
      );
      expect(await list()).to.deep.equal([]);

      // Without the webhook channel the monitor is made; adding the channel is refused and changes nothing.
      const plain = await api('/v1/monitors', post({ ...base, alerts: { emails: ['ops@example.test'] } }));
      expect(plain.status).to.equal(201);
      const monitor = ((await plain.json()) as any).data;
      await expectSecretMissing(await api(`/v1/monitors/${monitor.id}`, patch({ alerts: { webhookUrl: hook } })));
      const unchanged = ((await (await api(`/v1/monitors/${monitor.id}`)).json()) as any).data;
      expect(unchanged).to.deep.equal(monitor);
      // A URL kept with the channel off names no webhook: allowed.
      const off = await api(`/v1/monitors/${monitor.id}`, patch({ alerts: { webhook: false, webhookUrl: hook } }));
      expect(off.status).to.equal(200);
      expect(((await off.json()) as any).data.alerts).to.include({ webhook: false, webhookUrl: hook });

      // Once the account has its secret, both pass.
      expect((await api('/v1/webhooks/secret', post({}))).status).to.equal(201);
      const on = await api(`/v1/monitors/${monitor.id}`, patch({ alerts: { webhookUrl: hook } }));
      expect(on.status).to.equal(200);
      expect(((await on.json()) as any).data.alerts).to.include({ webhook: true, webhookUrl: hook });
      const created = await api('/v1/monitors', post({ ...base, alerts: { webhookUrl: hook } }));
      expect(created.status).to.equal(201);
      expect(await list()).to.have.length(2);
    },
  );
});
