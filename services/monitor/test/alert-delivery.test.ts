import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AddressPolicy, createLogger, SafeHttp } from '@webutil/kit';
import { createMailer } from '@webutil/kit/mail';
import { readOutbox, SmtpUnderTest } from '@webutil/scripts/mail-under-test';
import { expect } from 'chai';
import { AlertDelivery, openAlertDelivery } from '../src/alert-delivery.js';
import type { AlertInput } from '../src/alert-messages.js';
import type { MonitorRecord } from '../src/store/store.js';
import { AlertReceiver } from './alert-receiver.js';

const log = createLogger('alert-test', 'silent');
const fixtures = new AddressPolicy(['127.0.0.0/8']);

const monitor = (alerts: object): MonitorRecord => ({
  id: 'mon_alerts',
  subject: 'account:a1',
  name: 'Shop',
  kind: 'down-check',
  inputJson: '{"url":"https://shop.example/"}',
  requestJson: '{}',
  intervalSeconds: 60,
  alertsJson: JSON.stringify(alerts),
  state: 'active',
  status: 'down',
  createdAt: 0,
  updatedAt: 0,
  nextRunAt: 0,
  failures: 3,
  successes: 0,
});

const alert = (at: string, line: string): AlertInput => ({
  event: 'incident.opened',
  at,
  monitor: { id: 'mon_alerts', name: 'Shop', kind: 'down-check', target: 'https://shop.example/' },
  lines: [line],
  incident: { id: 'inc_1', openedAt: at, durationSeconds: 0, reason: 'connection refused' },
  links: { monitor: 'https://webutil.test/monitors#mon_alerts' },
});

describe('alert delivery: email and Slack-compatible URLs, with real receivers', function () {
  this.timeout(60_000);
  let receiver: AlertReceiver;
  let smtp: SmtpUnderTest;
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'alert-delivery-'));

  before(async () => {
    receiver = await AlertReceiver.start();
    smtp = await SmtpUnderTest.start();
  });
  after(async () => {
    await receiver.close();
    await smtp.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const delivery = (over: { policy?: AddressPolicy; smtpUrl?: string } = {}) =>
    new AlertDelivery({
      mailer: createMailer({ smtpUrl: over.smtpUrl ?? smtp.url, from: 'alerts@webutil.test', dataDir, log }),
      http: new SafeHttp({ policy: over.policy ?? fixtures }),
      log,
      retryBaseMs: 20,
    });

  it('mails every address and POSTs the Slack message to every URL', async () => {
    const alerts = {
      emails: ['ops@example.com', 'cto@example.com'],
      slackUrls: [`${receiver.url}/slack-a`, `${receiver.url}/slack-b`],
    };
    await delivery().deliver(monitor(alerts), alert('2026-11-29T10:00:00Z', 'HTTP 503 twice in a row'));
    const [slack] = await receiver.waitFor('/slack-a');
    expect(slack?.headers['content-type']).to.equal('application/json');
    const text = (JSON.parse(slack?.body ?? '{}') as { text: string }).text;
    expect(text).to.include('*Down: Shop (https://shop.example/)*').and.include('• HTTP 503 twice in a row');
    expect(receiver.on('/slack-b')).to.have.length(1);
    for (const to of alerts.emails) {
      const mail = await smtp.waitFor(to);
      expect(mail.subject).to.equal('[webutil] Down: Shop (https://shop.example/)');
      expect(mail.text).to.include('HTTP 503 twice in a row').and.include('https://webutil.test/monitors#mon_alerts');
    }
  });

  it('sends nothing in a maintenance window, once or weekly; the next alert outside one goes', async () => {
    const alerts = {
      emails: ['night@example.com'],
      slackUrls: [`${receiver.url}/slack-night`],
      maintenance: [
        { startsAt: '2026-11-29T02:00:00Z', endsAt: '2026-11-29T03:00:00Z' },
        { startsAt: '2026-11-22T22:00:00Z', endsAt: '2026-11-22T23:00:00Z', repeat: 'weekly' },
      ],
    };
    const silent = delivery();
    await silent.deliver(monitor(alerts), alert('2026-11-29T02:30:00Z', 'in the one-off window'));
    await silent.deliver(monitor(alerts), alert('2026-12-06T22:30:00Z', 'in the weekly window'));
    await silent.deliver(monitor(alerts), alert('2026-11-29T04:00:00Z', 'after the windows'));
    const sent = await receiver.waitFor('/slack-night');
    expect(sent).to.have.length(1);
    expect(sent[0]?.body).to.include('after the windows');
    const mail = await smtp.waitFor('night@example.com');
    expect(mail.text).to.include('after the windows');
    expect(smtp.received.filter((m) => m.to.includes('night@example.com'))).to.have.length(1);
  });

  it('tries a failing Slack URL three times at most (5xx), once for a 4xx, and never throws', async () => {
    receiver.answers.set('/slack-flaky', [503, 500]);
    receiver.answers.set('/slack-down', [500, 500, 500, 500]);
    receiver.answers.set('/slack-gone', [404]);
    const alerts = {
      slackUrls: [`${receiver.url}/slack-flaky`, `${receiver.url}/slack-down`, `${receiver.url}/slack-gone`],
    };
    await delivery().deliver(monitor(alerts), alert('2026-11-29T10:00:00Z', 'flaky'));
    expect(receiver.on('/slack-flaky')).to.have.length(3);
    expect(receiver.on('/slack-down')).to.have.length(3);
    expect(receiver.on('/slack-gone')).to.have.length(1);
  });

  it('refuses a URL the address policy refuses, and survives an SMTP server that is gone', async () => {
    const before = receiver.received.length;
    const publicOnly = delivery({ policy: new AddressPolicy(), smtpUrl: 'smtp://127.0.0.1:9' });
    const alerts = { emails: ['ops@example.com'], slackUrls: [`${receiver.url}/slack-private`] };
    await publicOnly.deliver(monitor(alerts), alert('2026-11-29T10:00:00Z', 'refused'));
    expect(receiver.received.length).to.equal(before);
  });

  it('opens from the service’s settings: dev outbox without SMTP, allowed ranges, billing’s address', async () => {
    const opened = openAlertDelivery(
      { billingAddress: '127.0.0.1:9', allowTargets: ['127.0.0.0/8'], mailFrom: 'alerts@webutil.test', dataDir },
      log,
    );
    const alerts = { emails: ['outbox@example.com'], slackUrls: [`${receiver.url}/slack-opened`] };
    try {
      await opened.sink.deliver(monitor(alerts), alert('2026-11-29T10:00:00Z', 'from the settings'));
    } finally {
      opened.close();
    }
    expect((await receiver.waitFor('/slack-opened'))[0]?.body).to.include('from the settings');
    const mail = (await readOutbox(dataDir)).find((m) => m.to.includes('outbox@example.com'));
    expect(mail?.subject).to.equal('[webutil] Down: Shop (https://shop.example/)');
  });

  it('reports a signed webhook it has no billing to book with as a failure, not a crash', async () => {
    const alerts = { webhook: true, webhookUrl: `${receiver.url}/hook` };
    await delivery().deliver(monitor(alerts), alert('2026-11-29T10:00:00Z', 'no books'));
    expect(receiver.on('/hook')).to.deep.equal([]);
  });
});
