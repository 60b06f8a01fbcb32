import { expect } from 'chai';
import { type AlertInput, alertMessages, formatDuration } from '../src/alert-messages.js';
import { compareLinkCrawls } from '../src/link-changes.js';

const monitor = { id: 'mon_1', name: 'Shop <prod>', kind: 'broken-links-crawl', target: 'https://shop.test/' };
const links = { monitor: 'https://api.test/monitors/mon_1', run: 'https://api.test/v1/monitors/mon_1/runs?from=x' };

describe('alertMessages', () => {
  const changes = compareLinkCrawls(
    { links: [], summary: { broken: 0 } },
    {
      links: [{ url: 'https://shop.test/gone?a=1&b=2', severity: 'broken', statusCode: 404, statusText: 'Not Found' }],
      summary: { broken: 1 },
    },
  );
  const input: AlertInput = {
    event: 'changed',
    at: '2026-11-29T13:00:00.000Z',
    monitor,
    lines: changes.lines,
    changes,
    links,
  };

  it('the webhook body carries the event, the lines, the comparison and the links as JSON', () => {
    const { webhook } = alertMessages(input);
    expect(webhook).to.deep.equal({
      type: 'monitor.changed',
      at: input.at,
      title: `Changed: ${monitor.name} (${monitor.target})`,
      monitor,
      lines: changes.lines,
      changes,
      links,
    });
    expect(JSON.parse(JSON.stringify(webhook))).to.deep.equal(webhook);
  });

  it('the Slack text is mrkdwn with escaped markup and labelled links', () => {
    const { slack } = alertMessages(input);
    const lines = slack.text.split('\n');
    expect(lines[0]).to.equal('*Changed: Shop &lt;prod&gt; (https://shop.test/)*');
    expect(lines).to.include('• https://shop.test/gone?a=1&amp;b=2 (404)');
    expect(lines.at(-1)).to.equal(`<${links.monitor}|Open the monitor> · <${links.run}|This run>`);
  });

  it('the email names the monitor and lists every line and link', () => {
    const { email } = alertMessages(input);
    expect(email.subject).to.equal(`[webutil] Changed: ${monitor.name} (${monitor.target})`);
    for (const line of changes.lines) expect(email.text).to.include(line);
    expect(email.text).to.include(`Open the monitor: ${links.monitor}`);
    expect(email.text).to.include(`At: ${input.at}`);
  });

  it('incidents: opened says down with the reason; closed says how long it lasted', () => {
    const incident = {
      id: 'inc_1',
      openedAt: '2026-11-29T10:00:00Z',
      durationSeconds: 3 * 3600 + 5 * 60,
      reason: 'ECONNREFUSED',
    };
    const opened = alertMessages({
      ...input,
      event: 'incident.opened',
      lines: [incident.reason],
      changes: undefined,
      incident,
    });
    expect(opened.webhook.type).to.equal('monitor.incident.opened');
    expect(opened.webhook).to.not.have.property('changes');
    expect(opened.email.subject).to.equal(`[webutil] Down: ${monitor.name} (${monitor.target})`);
    const closed = alertMessages({ ...input, event: 'incident.closed', lines: ['Up again.'], incident });
    expect(closed.webhook.title).to.equal(`Up again: ${monitor.name} (${monitor.target}) after 3 h 5 min`);
    expect(closed.webhook.incident).to.deep.equal(incident);
  });
});

describe('formatDuration', () => {
  const cases: [number, string][] = [
    [0, '0 s'],
    [45, '45 s'],
    [60, '1 min'],
    [61, '1 min 1 s'],
    [3600 * 26 + 120, '1 d 2 h'],
    [86_400 + 59, '1 d 59 s'],
  ];
  for (const [seconds, text] of cases)
    it(`${seconds} s -> ${text}`, () => expect(formatDuration(seconds)).to.equal(text));
});
