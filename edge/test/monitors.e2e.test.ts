import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { expect } from 'chai';
import { account, expectFailure, json } from './billing-helpers.js';

const post = (body: unknown) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});
const patch = (body: unknown) => ({ ...post(body), method: 'PATCH' });

/** Issue 40: managing monitors through the REST edge, and every bad input refused with nothing made. */
describe('monitors: the REST routes', function () {
  this.timeout(120_000);
  let stack: TestStack;
  let otherKey: string;

  before(async () => {
    stack = await startTestStack();
    otherKey = (await account(stack, 'STARTER')).apiKey;
  });
  after(async () => {
    await stack?.stop();
  });

  const monitors = async (apiKey?: string) => {
    const res = await stack.api('/v1/monitors', { apiKey });
    expect(res.status).to.equal(200);
    return (await json(res)).data.monitors as { id: string }[];
  };

  it('creates, reads, lists, changes, pauses, resumes and deletes a monitor', async () => {
    const created = await stack.api(
      '/v1/monitors',
      post({
        name: 'Home page',
        kind: 'down-check',
        input: { url: 'https://example.com/', expectStatus: '200-299' },
        intervalSeconds: 60,
        alerts: { emails: ['ops@example.com'], failureThreshold: 2 },
      }),
    );
    expect(created.status).to.equal(201);
    const monitor = (await json(created)).data;
    expect(monitor).to.include({ name: 'Home page', kind: 'down-check', intervalSeconds: 60, state: 'active' });
    expect(monitor.status).to.equal('unknown');
    expect(monitor.input).to.deep.equal({ url: 'https://example.com/', expectStatus: '200-299' });
    expect(monitor.alerts).to.include({ webhook: false, failureThreshold: 2 });
    expect(Date.parse(monitor.nextRunAt) - Date.now()).to.be.within(-5_000, 61_000);

    const read = await json(await stack.api(`/v1/monitors/${monitor.id}`));
    expect(read.data).to.deep.equal(monitor);
    expect((await monitors()).map((m) => m.id)).to.include(monitor.id);

    const changed = await stack.api(
      `/v1/monitors/${monitor.id}`,
      patch({ name: 'Home', intervalSeconds: 120, input: { url: 'https://example.com/shop' } }),
    );
    expect(changed.status).to.equal(200);
    expect((await json(changed)).data).to.include({ name: 'Home', intervalSeconds: 120 });
    const afterChange = (await json(await stack.api(`/v1/monitors/${monitor.id}`))).data;
    expect(afterChange.input).to.deep.equal({ url: 'https://example.com/shop' });

    const paused = (await json(await stack.api(`/v1/monitors/${monitor.id}/pause`, post({})))).data;
    expect(paused).to.include({ state: 'paused', pausedReason: 'by request', nextRunAt: null });
    const resumed = (await json(await stack.api(`/v1/monitors/${monitor.id}/resume`, post({})))).data;
    expect(resumed).to.include({ state: 'active', pausedReason: null });

    const runs = await json(await stack.api(`/v1/monitors/${monitor.id}/runs?limit=10`));
    // The scheduler runs: a slot may have come in the seconds the monitor was active (its first is within a minute).
    expect(runs.data.nextPageToken).to.equal(null);
    expect(runs.data.runs).to.have.length.at.most(2);
    const incidents = await json(await stack.api(`/v1/monitors/${monitor.id}/incidents`));
    expect(incidents.data).to.deep.equal({ incidents: [] });

    const deleted = await stack.api(`/v1/monitors/${monitor.id}`, { method: 'DELETE' });
    expect((await json(deleted)).data).to.deep.equal({ id: monitor.id, deleted: true });
    await expectFailure(await stack.api(`/v1/monitors/${monitor.id}`), 404, 'monitor_not_found');
  });

  it("answers 404 for another account's monitor, on every route, and changes nothing", async () => {
    const mine = (
      await json(
        await stack.api(
          '/v1/monitors',
          post({ name: 'TLS', kind: 'ssl-scan', input: { domain: 'example.com', port: 443 }, intervalSeconds: 3600 }),
        ),
      )
    ).data;
    expect(mine.input).to.deep.equal({ domain: 'example.com', port: '443' });
    const as = { apiKey: otherKey };
    await expectFailure(await stack.api(`/v1/monitors/${mine.id}`, as), 404, 'monitor_not_found');
    await expectFailure(
      await stack.api(`/v1/monitors/${mine.id}`, { ...patch({ name: 'x' }), ...as }),
      404,
      'monitor_not_found',
    );
    await expectFailure(
      await stack.api(`/v1/monitors/${mine.id}/pause`, { ...post({}), ...as }),
      404,
      'monitor_not_found',
    );
    await expectFailure(await stack.api(`/v1/monitors/${mine.id}/runs`, as), 404, 'monitor_not_found');
    await expectFailure(await stack.api(`/v1/monitors/${mine.id}/incidents`, as), 404, 'monitor_not_found');
    await expectFailure(
      await stack.api(`/v1/monitors/${mine.id}`, { method: 'DELETE', ...as }),
      404,
      'monitor_not_found',
    );
    expect(await monitors(otherKey)).to.deep.equal([]);
    expect((await json(await stack.api(`/v1/monitors/${mine.id}`))).data).to.include({ name: 'TLS', state: 'active' });
  });

  it('refuses bad input with a 4xx naming it, and creates nothing', async () => {
    const before = (await monitors()).length;
    const cases: [unknown, number, string][] = [
      [
        { name: 'a', kind: 'down-check', input: { url: 'https://example.com/' }, intervalSeconds: 30 },
        400,
        'invalid_interval',
      ],
      [{ name: 'a', kind: 'ssl-scan', input: { domain: 'example.com' }, intervalSeconds: 60 }, 400, 'invalid_interval'],
      [{ name: 'a', kind: 'ping', input: {}, intervalSeconds: 60 }, 400, 'invalid_request'],
      [
        { name: 'a', kind: 'down-check', input: { url: 'ftp://example.com/' }, intervalSeconds: 60 },
        400,
        'invalid_url',
      ],
      [
        { name: 'a', kind: 'down-check', input: { url: 'https://example.com/', method: 'PUT' }, intervalSeconds: 60 },
        400,
        'invalid_input',
      ],
      [{ name: 'a', kind: 'down-check', input: 'https://example.com/', intervalSeconds: 60 }, 400, 'invalid_request'],
      [
        { name: '', kind: 'down-check', input: { url: 'https://example.com/' }, intervalSeconds: 60 },
        400,
        'invalid_request',
      ],
      [
        {
          name: 'a',
          kind: 'down-check',
          input: { url: 'https://example.com/' },
          intervalSeconds: 60,
          alerts: { slackUrls: ['http://127.0.0.1/hook'] },
        },
        400,
        'invalid_webhook_url',
      ],
      [
        {
          name: 'a',
          kind: 'down-check',
          input: { url: 'https://example.com/' },
          intervalSeconds: 60,
          alerts: { emails: ['not-an-address'] },
        },
        400,
        'invalid_request',
      ],
    ];
    for (const [body, status, code] of cases) {
      await expectFailure(await stack.api('/v1/monitors', post(body)), status, code);
    }
    await expectFailure(await stack.api('/v1/monitors', { method: 'POST', body: 'x' }), 415, 'unsupported_media_type');
    await expectFailure(await stack.api('/v1/monitors', { anonymous: true }), 401, 'account_required');
    expect((await monitors()).length).to.equal(before);
  });

  it("holds an account to its plan's count of monitors", async () => {
    const { apiKey } = await account(stack, 'STARTER');
    const body = post({ name: 'n', kind: 'down-check', input: { url: 'https://example.com/' }, intervalSeconds: 60 });
    for (let i = 0; i < 20; i++) expect((await stack.api('/v1/monitors', { ...body, apiKey })).status).to.equal(201);
    await expectFailure(await stack.api('/v1/monitors', { ...body, apiKey }), 403, 'monitor_limit_reached');
    expect((await monitors(apiKey)).length).to.equal(20);
  });
});
