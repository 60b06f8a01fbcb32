import { execFile } from 'node:child_process';
import { createPrivateKey } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type RawTlsServer, startRawTlsServer } from '@webutil/scripts/raw-tls-server';
import { issue } from '@webutil/scripts/tls-fixtures';
import { expect } from 'chai';
import { scanSuites } from '../src/cipher-suites.js';
import { checkVulnerabilities } from '../src/vulnerabilities.js';

/** Debian's testssl.sh, when installed (package testssl.sh); the test is skipped without it. */
const TESTSSL = ['/usr/bin/testssl', '/usr/bin/testssl.sh'].find((p) => {
  try {
    readFileSync(p);
    return true;
  } catch {
    return false;
  }
});

/** testssl.sh's ids for our checks, and the flags that run them. */
const TESTSSL_IDS = { heartbleed: 'heartbleed', robot: 'ROBOT', drown: 'DROWN', freak: 'FREAK', rc4: 'RC4' } as const;
/**
 * No reverse DNS, and short waits: the record-level server completes no handshake, so each of
 * testssl.sh's own handshakes, its service banner read (HEADER_MAXSLEEP), its socket reads
 * (MAX_WAITSOCK) and ROBOT's shortened flow (ROBOT_TIMEOUT) would otherwise wait out its default.
 * The server answers at once where it answers at all.
 */
const FLAGS = ['-H', '-BB', '-D', '-F', '-4', '--nodns', 'none', '--openssl-timeout', '2'];
const TESTSSL_ENV = { ...process.env, HEADER_MAXSLEEP: '1', MAX_WAITSOCK: '3', ROBOT_TIMEOUT: '3' };

/** testssl.sh's severities: OK and INFO clear, LOW to CRITICAL find, WARN could not tell. */
function verdictOf(severity: string): string {
  if (severity === 'OK' || severity === 'INFO') return 'not_vulnerable';
  if (severity === 'WARN') return 'unknown';
  return 'vulnerable';
}

describe('SSL scan verdicts against testssl.sh on the same server', function () {
  this.timeout(300_000);
  let server: RawTlsServer;
  let dir: string;
  before(async function () {
    if (!TESTSSL) this.skip();
    const cert = await issue({ commonName: 'localhost', altNames: ['localhost'], key: 'rsa2048' });
    server = await startRawTlsServer({
      versions: ['SSLv3', 'TLSv1', 'TLSv1.2'],
      suites: [0x0005, 0x0003, 0x002f],
      certificate: Buffer.from(cert.cert.rawData),
      sslv2: true,
      heartbeat: true,
      heartbleed: true,
      rsaKey: createPrivateKey(cert.keyPem),
      robotOracle: true,
    });
    dir = mkdtempSync(path.join(os.tmpdir(), 'testssl-'));
  });
  after(async () => {
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('agrees on Heartbleed, ROBOT, DROWN, FREAK and RC4 (each vulnerable there)', async () => {
    const json = path.join(dir, 'result.json');
    await new Promise<void>((resolve, reject) =>
      execFile(
        TESTSSL as string,
        [...FLAGS, '--warnings', 'off', '--quiet', '--color', '0', '--jsonfile', json, `127.0.0.1:${server.port}`],
        { timeout: 280_000, env: TESTSSL_ENV },
        (err) => (err && (err as { code?: unknown }).code === undefined ? reject(err) : resolve()),
      ),
    );
    const theirs = new Map(
      (JSON.parse(readFileSync(json, 'utf8')) as { id: string; severity: string }[]).map((f) => [f.id, f.severity]),
    );
    const endpoint = { address: '127.0.0.1', port: server.port, servername: 'localhost' };
    const signal = new AbortController().signal;
    const suites = await scanSuites(endpoint, 2_000, signal);
    const ours = await checkVulnerabilities({
      endpoint,
      timeoutMs: 2_000,
      signal,
      suites,
      page: { answered: false, why: 'not asked' },
    });
    for (const [id, theirId] of Object.entries(TESTSSL_IDS)) {
      const severity = theirs.get(theirId);
      expect(severity, `testssl.sh reported no ${theirId}`).to.be.a('string');
      const mine = ours.find((r) => r.id === id);
      expect(mine?.verdict, `${id}: ours ${JSON.stringify(mine)}, testssl.sh ${severity}`).to.equal(
        verdictOf(severity as string),
      );
      expect(mine?.verdict).to.equal('vulnerable');
    }
  });
});
