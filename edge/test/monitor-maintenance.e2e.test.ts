import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { expect } from 'chai';
import { expectFailure, json } from './billing-helpers.js';

const post = (body: unknown) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

const once = { startsAt: '2026-12-01T02:00:00.000Z', endsAt: '2026-12-01T04:00:00.000Z' };
const weekly = { startsAt: '2026-12-06T23:00:00.000Z', endsAt: '2026-12-07T01:00:00.000Z', repeat: 'weekly' };
const monitorWith = (maintenance: unknown) => ({
  name: 'Shop',
  kind: 'down-check',
  input: { url: 'https://example.com/' },
  intervalSeconds: 300,
  alerts: { emails: ['ops@example.com'], maintenance },
});

/** Issue 40: maintenance windows (once or weekly) through the REST edge; a bad one is a 400 with nothing made. */
describe('monitors: maintenance windows', function () {
  this.timeout(120_000);
  let stack: TestStack;

  before(async () => {
    stack = await startTestStack();
  });
  after(async () => {
    await stack?.stop();
  });

  const count = async () => (await json(await stack.api('/v1/monitors'))).data.monitors.length as number;

  it('keeps a one-off and a weekly window, shows them back and changes them with PATCH', async () => {
    const created = await stack.api('/v1/monitors', post(monitorWith([once, weekly])));
    expect(created.status).to.equal(201);
    const monitor = (await json(created)).data;
    expect(monitor.alerts.maintenance).to.deep.equal([once, weekly]);
    const changed = await stack.api(`/v1/monitors/${monitor.id}`, {
      ...post({ alerts: { maintenance: [weekly] } }),
      method: 'PATCH',
    });
    expect(changed.status).to.equal(200);
    expect((await json(changed)).data.alerts.maintenance).to.deep.equal([weekly]);
  });

  it('refuses a window that ends before it starts, a weekly one of a week or more, another repeat', async () => {
    const before = await count();
    const bad: [unknown, string][] = [
      [[{ startsAt: once.endsAt, endsAt: once.startsAt }], 'a maintenance window must end after it starts'],
      [
        [{ startsAt: '2026-12-01T00:00:00Z', endsAt: '2026-12-08T00:00:00Z', repeat: 'weekly' }],
        'a weekly maintenance window must be shorter than a week',
      ],
      [[{ ...once, repeat: 'daily' }], 'maintenance repeat must be weekly'],
      [[{ ...once, timezone: 'Europe/Paris' }], 'timezone'],
      [[{ startsAt: 'tomorrow', endsAt: once.endsAt }], 'maintenance startsAt must be an ISO 8601 time'],
    ];
    for (const [maintenance, message] of bad) {
      const body = await expectFailure(
        await stack.api('/v1/monitors', post(monitorWith(maintenance))),
        400,
        'invalid_request',
      );
      expect(JSON.stringify(body)).to.include(message);
    }
    expect(await count()).to.equal(before);
  });
});
