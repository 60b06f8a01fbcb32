import { expect } from 'chai';
import { monitorsPausedMail } from '../src/mail/messages.js';

const links = { accountUrl: 'https://webutil.example/account', monitorsUrl: 'https://webutil.example/monitors' };

describe('the monitors-paused notice (decision 0483)', () => {
  it('names the one monitor paused and how to resume', () => {
    const mail = monitorsPausedMail('a@example.test', [{ id: 'mon_1', name: 'Home' }], links);
    expect(mail).to.include({ to: 'a@example.test', subject: 'Your monitor is paused: out of credits' });
    expect(mail.text).to.include('this monitor was paused').and.include('- Home (mon_1)\n');
    expect(mail.text).to.include(`\n${links.accountUrl}\n`).and.include(`\n${links.monitorsUrl}\n`);
    expect(mail.text).to.include('POST /v1/monitors/{id}/resume');
  });

  it('names at most 20 monitors and counts the rest', () => {
    const monitors = Array.from({ length: 23 }, (_, i) => ({ id: `mon_${i}`, name: `M${i}` }));
    const mail = monitorsPausedMail('a@example.test', monitors, links);
    expect(mail.subject).to.equal('Your 23 monitors are paused: out of credits');
    expect(mail.text).to.include('- M19 (mon_19)\n').and.include('- and 3 more\n');
    expect(mail.text).to.not.include('mon_20');
  });
});
