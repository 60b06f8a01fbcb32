import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { type FixtureDns, startFixtureDns } from '@webutil/scripts/fixture-dns';
import { SmtpUnderTest } from '@webutil/scripts/mail-under-test';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { type Issued, issue } from '@webutil/scripts/tls-fixtures';
import { expect } from 'chai';
import { eventually, json } from './billing-helpers.js';

interface Run {
  id: string;
  outcome: string;
  reason: string;
  creditsSpent: number;
  changes: Record<string, any> | null;
  result: Record<string, any> | null;
}

/** Every monitor here runs daily, which the time scale makes a second. */
const DAY = 86_400;
const HSTS = 'max-age=31536000; includeSubDomains';

const post = (body: unknown) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

/**
 * Issue 40, an ssl-scan monitor end to end: a TLS server on 127.0.0.1 (the scanner's port pointed
 * at it, the test root trusted) serves one certificate, the monitor runs on its schedule, then the
 * server swaps to another certificate (server.setSecureContext): fewer days to expiry than a chosen
 * threshold and a 1024-bit RSA key (a worse grade). The run after the swap records a new
 * certificate, its days to expiry, the threshold crossed and the grade change, and its alert reaches
 * the account's Slack-compatible URL and email.
 */
describe('monitors: an ssl-scan monitor compares certificates between runs', function () {
  this.timeout(240_000);
  let dir: string;
  let dns: FixtureDns;
  let tlsServer: https.Server;
  let slack: Server;
  let smtp: SmtpUnderTest;
  let stack: TestStack;
  let intermediate: Issued;
  let first: Issued;
  let second: Issued;
  const slackMessages: { text: string }[] = [];
  let slackUrl: string;

  /** What the server sends: the leaf and the intermediate, and its key. */
  const context = (leaf: Issued) => ({
    key: leaf.keyPem,
    cert: leaf.pem + intermediate.pem,
    minVersion: 'TLSv1.2' as const,
    ciphers: 'DEFAULT:@SECLEVEL=0',
  });

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'monitor-ssl-'));
    const root = await issue({ commonName: 'Monitor Test Root', ca: true, key: 'rsa2048', validDays: [-365, 3650] });
    intermediate = await issue({ commonName: 'Monitor Test Intermediate', ca: true, validDays: [-365, 1825] }, root);
    const leaf = (options: Parameters<typeof issue>[0]) =>
      issue({ ...options, commonName: 'localhost', altNames: ['localhost'] }, intermediate);
    first = await leaf({ commonName: 'localhost', validDays: [-30, 60] });
    second = await leaf({ commonName: 'localhost', validDays: [-85, 5], key: 'rsa1024' });
    const caFile = path.join(dir, 'root.pem');
    writeFileSync(caFile, root.pem);

    tlsServer = https.createServer(context(first), (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain', 'strict-transport-security': HSTS }).end('ok\n');
    });
    // The scanner's probes that offer what the server refuses end in handshake errors: expected.
    tlsServer.on('tlsClientError', () => undefined);
    tlsServer.listen(0, '127.0.0.1');
    await once(tlsServer, 'listening');

    slack = createHttpServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => {
        body += chunk;
      });
      req.on('end', () => {
        slackMessages.push(JSON.parse(body) as { text: string });
        res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      });
    });
    slack.listen(0, '127.0.0.1');
    await once(slack, 'listening');
    slackUrl = `http://127.0.0.1:${(slack.address() as AddressInfo).port}/slack`;

    [dns, smtp] = await Promise.all([startFixtureDns(), SmtpUnderTest.start()]);
    stack = await startTestStack({
      allowTargets: '127.0.0.0/8',
      env: { SMTP_URL: smtp.url },
      envFor: {
        'tls-scan': {
          SSL_SCAN_DNS_SERVERS: dns.server,
          SSL_SCAN_PORT: String((tlsServer.address() as AddressInfo).port),
          SSL_SCAN_EXTRA_CA_FILE: caFile,
          SSL_SCAN_HANDSHAKE_TIMEOUT_MS: '2000',
          SSL_SCAN_PROBE_TIMEOUT_MS: '2000',
        },
        monitor: { MONITOR_TIME_SCALE: String(DAY), MONITOR_TICK_MS: '100' },
      },
    });
  });
  after(async () => {
    await stack?.stop();
    tlsServer?.closeAllConnections();
    tlsServer?.close();
    slack?.close();
    await Promise.all([dns?.close(), smtp?.close()]);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const runsOf = async (id: string): Promise<Run[]> =>
    (await json(await stack.api(`/v1/monitors/${id}/runs?limit=500`))).data.runs;
  const finished = (runs: Run[]) => runs.filter((run) => run.outcome === 'ok');
  /** The SHA-256 fingerprint of a certificate, as the scan writes it (AB:CD:...). */
  const fingerprint = (leaf: Issued) =>
    createHash('sha256').update(Buffer.from(leaf.cert.rawData)).digest('hex').toUpperCase().match(/../g)?.join(':');

  it(
    'records a new certificate, its days to expiry, the ' + 'threshold crossed and the grade change, and alerts',
    async () => {
      const created = await stack.api(
        '/v1/monitors',
        post({
          name: 'Certificate',
          kind: 'ssl-scan',
          input: { domain: 'localhost' },
          intervalSeconds: DAY,
          alerts: { expiryDays: [30, 7], slackUrls: [slackUrl], emails: ['certs@example.test'] },
        }),
      );
      const body = await json(created);
      expect(created.status, JSON.stringify(body)).to.equal(201);
      const { id } = body.data as { id: string };
      expect(body.data.alerts.expiryDays).to.deep.equal([30, 7]);

      // The first certificate: 60 days left, over both thresholds; nothing to alert.
      const before = await eventually(async () => {
        const runs = finished(await runsOf(id));
        expect(runs.length).to.be.at.least(1);
        return runs.at(-1) as Run;
      }, 60_000);
      expect(before.result?.securityGrade).to.equal('A+');
      expect(before.result?.daysUntilExpiry).to.be.within(59, 60);
      const firstPrint = before.result?.certificate.fingerprint256 as string;
      expect(firstPrint).to.equal(fingerprint(first));
      expect(before.changes).to.include({ kind: 'ssl-scan', expiryThresholdCrossed: null, alert: false });
      expect(slackMessages).to.deep.equal([]);

      // The server swaps certificates between runs: 5 days left (under 7), a 1024-bit RSA key (capped at B).
      tlsServer.setSecureContext(context(second));
      const changed = await eventually(async () => {
        const run = finished(await runsOf(id)).find((r) => r.changes?.newCertificate);
        expect(run).to.not.equal(undefined);
        return run as Run;
      }, 60_000);
      expect(changed.result?.securityGrade).to.equal('B');
      expect(changed.result?.daysUntilExpiry).to.be.within(4, 5);
      expect(changed.changes).to.deep.include({
        kind: 'ssl-scan',
        daysUntilExpiry: changed.result?.daysUntilExpiry,
        expiryThresholdCrossed: 7,
        expired: false,
        grade: { from: 'A+', to: 'B', direction: 'worse' },
        alert: true,
      });
      expect(changed.changes?.newCertificate).to.include({
        fromFingerprint256: fingerprint(first),
        toFingerprint256: fingerprint(second),
        validTo: changed.result?.certificate.valid_to,
      });
      expect(changed.creditsSpent).to.equal(1);

      // The alert reached both channels, once, saying what changed.
      const alerts = await eventually(async () => {
        const texts = slackMessages.map((m) => m.text).filter((t) => t.startsWith('*Changed: Certificate (localhost)'));
        expect(texts).to.have.length(1);
        return texts;
      }, 30_000);
      expect(alerts[0]).to.include('expires in').and.include('threshold 7 days');
      expect(alerts[0]).to.include('went from A+ to B (worse)');
      expect(alerts[0]).to.include('serves a new certificate');
      const mail = await smtp.waitFor('certs@example.test', (m) => m.subject.includes('Changed: Certificate'), 30_000);
      expect(mail.subject).to.equal('[webutil] Changed: Certificate (localhost)');
      expect(mail.text).to.include('threshold 7 days').and.include('went from A+ to B (worse)');

      // Later runs of the same certificate cross nothing again and stay quiet.
      await eventually(async () => {
        const runs = finished(await runsOf(id));
        const after = runs.slice(0, runs.indexOf(runs.find((r) => r.id === changed.id) as Run));
        expect(after.length).to.be.at.least(1);
        expect(after.every((r) => r.changes?.alert === false && r.changes?.newCertificate === null)).to.equal(true);
      }, 60_000);
      await stack.api(`/v1/monitors/${id}/pause`, post({}));
      expect(slackMessages.filter((m) => m.text.includes('Certificate'))).to.have.length(1);
    },
  );
});
