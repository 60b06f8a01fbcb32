import { expect } from 'chai';
import { inMaintenance, monitorInMaintenance } from '../src/in-maintenance.js';

const at = (iso: string) => Date.parse(iso);

describe('inMaintenance', () => {
  const once = { startsAt: '2026-12-01T02:00:00Z', endsAt: '2026-12-01T04:00:00Z' };
  const weekly = { startsAt: '2026-12-06T23:00:00Z', endsAt: '2026-12-07T01:00:00Z', repeat: 'weekly' };

  it('silences a one-off window from its start (inclusive) to its end (exclusive)', () => {
    expect(inMaintenance([once], at('2026-12-01T01:59:59Z'))).to.equal(false);
    expect(inMaintenance([once], at('2026-12-01T02:00:00Z'))).to.equal(true);
    expect(inMaintenance([once], at('2026-12-01T03:59:59Z'))).to.equal(true);
    expect(inMaintenance([once], at('2026-12-01T04:00:00Z'))).to.equal(false);
    expect(inMaintenance([once], at('2026-12-08T03:00:00Z'))).to.equal(false);
  });

  it('repeats a weekly window every 7 days from its first start, across midnight, never before it', () => {
    expect(inMaintenance([weekly], at('2026-11-29T23:30:00Z'))).to.equal(false);
    expect(inMaintenance([weekly], at('2026-12-06T23:30:00Z'))).to.equal(true);
    expect(inMaintenance([weekly], at('2026-12-14T00:30:00Z'))).to.equal(true);
    expect(inMaintenance([weekly], at('2027-03-08T00:59:59Z'))).to.equal(true);
    expect(inMaintenance([weekly], at('2026-12-14T01:00:00Z'))).to.equal(false);
    expect(inMaintenance([weekly], at('2026-12-10T00:30:00Z'))).to.equal(false);
  });

  it('is silent about no windows and any of several', () => {
    expect(inMaintenance(undefined, at('2026-12-01T03:00:00Z'))).to.equal(false);
    expect(inMaintenance([], at('2026-12-01T03:00:00Z'))).to.equal(false);
    expect(inMaintenance([weekly, once], at('2026-12-01T03:00:00Z'))).to.equal(true);
  });

  it('reads a monitor’s windows from its stored alerts', () => {
    const alertsJson = JSON.stringify({ emails: ['ops@example.com'], maintenance: [once] });
    expect(monitorInMaintenance({ alertsJson }, at('2026-12-01T03:00:00Z'))).to.equal(true);
    expect(monitorInMaintenance({ alertsJson: '{}' }, at('2026-12-01T03:00:00Z'))).to.equal(false);
  });
});
