import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { env, loadConfig, serviceEnv } from '../src/config.js';

const configModule = fileURLToPath(new URL('../src/config.ts', import.meta.url));

const shape = {
  ...serviceEnv,
  PORT: env.port(50051),
  WORKERS: env.int(4, 1),
  NAME: env.string('meta-scan'),
  NATS_URL: env.optionalString(),
  VERBOSE: env.bool(false),
  STRICT: env.bool(true),
  WEBUTIL_ALLOW_TARGETS: env.cidrList(),
};

/** Runs loadConfig(shape) in a child process with the given environment. */
function runChild(childEnv: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const script = `
    const { env, loadConfig, serviceEnv } = await import(${JSON.stringify(configModule)});
    const config = loadConfig({
      ...serviceEnv,
      PORT: env.port(50051),
      WORKERS: env.int(4, 1),
      VERBOSE: env.bool(false),
      WEBUTIL_ALLOW_TARGETS: env.cidrList(),
    });
    process.stdout.write(JSON.stringify(config));
  `;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: fileURLToPath(new URL('.', import.meta.url)),
      env: { PATH: process.env.PATH ?? '', ...childEnv },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('loadConfig', () => {
  it('returns typed defaults for an empty environment', () => {
    const config = loadConfig(shape, {});
    expect(config).to.deep.equal({
      LOG_LEVEL: 'info',
      SHUTDOWN_GRACE_MS: 10_000,
      PORT: 50051,
      WORKERS: 4,
      NAME: 'meta-scan',
      VERBOSE: false,
      STRICT: true,
      WEBUTIL_ALLOW_TARGETS: [],
    });
    expect(config.METRICS_PORT).to.equal(undefined);
    expect(config.NATS_URL).to.equal(undefined);
    // Compile-time types: these assignments only typecheck if the inferred types are right.
    const port: number = config.PORT;
    const verbose: boolean = config.VERBOSE;
    const targets: string[] = config.WEBUTIL_ALLOW_TARGETS;
    const nats: string | undefined = config.NATS_URL;
    expect([port, verbose, targets, nats]).to.have.length(4);
  });

  it('coerces and validates values from the environment', () => {
    const config = loadConfig(shape, {
      LOG_LEVEL: 'debug',
      METRICS_PORT: '9464',
      PORT: ' 8080 ',
      WORKERS: '16',
      NAME: 'crawl',
      NATS_URL: 'nats://127.0.0.1:4222',
      VERBOSE: '1',
      STRICT: 'false',
      WEBUTIL_ALLOW_TARGETS: ' 127.0.0.0/8 , ::1/128,,',
      UNRELATED: 'ignored',
    });
    expect(config).to.deep.equal({
      LOG_LEVEL: 'debug',
      METRICS_PORT: 9464,
      SHUTDOWN_GRACE_MS: 10_000,
      PORT: 8080,
      WORKERS: 16,
      NAME: 'crawl',
      NATS_URL: 'nats://127.0.0.1:4222',
      VERBOSE: true,
      STRICT: false,
      WEBUTIL_ALLOW_TARGETS: ['127.0.0.0/8', '::1/128'],
    });
  });

  it('reads an empty variable as unset: its default, or absent', () => {
    const config = loadConfig(shape, {
      PORT: '',
      METRICS_PORT: '',
      NAME: '',
      NATS_URL: '',
      VERBOSE: '',
      WEBUTIL_ALLOW_TARGETS: '',
    });
    expect(config).to.deep.equal(loadConfig(shape, {}));
    expect(config).to.not.have.property('NATS_URL');
  });

  it('reads process.env by default', () => {
    const before = process.env.WEBUTIL_KIT_TEST_PORT;
    process.env.WEBUTIL_KIT_TEST_PORT = '1234';
    try {
      expect(loadConfig({ WEBUTIL_KIT_TEST_PORT: env.port(1) }).WEBUTIL_KIT_TEST_PORT).to.equal(1234);
    } finally {
      if (before === undefined) delete process.env.WEBUTIL_KIT_TEST_PORT;
      else process.env.WEBUTIL_KIT_TEST_PORT = before;
    }
  });

  describe('a bad value stops the process (child process)', function () {
    this.timeout(30_000);

    it('starts normally with good values', async () => {
      const { code, stdout, stderr } = await runChild({ PORT: '8081', WEBUTIL_ALLOW_TARGETS: '127.0.0.0/8' });
      expect(stderr).to.equal('');
      expect(code).to.equal(0);
      expect(JSON.parse(stdout)).to.deep.equal({
        LOG_LEVEL: 'info',
        SHUTDOWN_GRACE_MS: 10_000,
        PORT: 8081,
        WORKERS: 4,
        VERBOSE: false,
        WEBUTIL_ALLOW_TARGETS: ['127.0.0.0/8'],
      });
    });

    const bad: [string, Record<string, string>][] = [
      ['PORT', { PORT: 'eighty' }],
      ['PORT', { PORT: '70000' }],
      ['PORT', { PORT: ' ' }], // white space must not silently mean port 0
      ['PORT', { PORT: '80.5' }],
      ['METRICS_PORT', { METRICS_PORT: ' ' }],
      ['SHUTDOWN_GRACE_MS', { SHUTDOWN_GRACE_MS: '\t' }],
      ['LOG_LEVEL', { LOG_LEVEL: 'loud' }],
      ['WORKERS', { WORKERS: '0' }],
      ['VERBOSE', { VERBOSE: 'yes' }],
      ['WEBUTIL_ALLOW_TARGETS', { WEBUTIL_ALLOW_TARGETS: '127.0.0.0/8,not-a-cidr' }],
    ];
    for (const [name, childEnv] of bad) {
      it(`exits 78 with one stderr line naming ${name} for ${JSON.stringify(childEnv)}`, async () => {
        const { code, stdout, stderr } = await runChild(childEnv);
        expect(code, stderr).to.equal(78);
        expect(stdout).to.equal('');
        const lines = stderr.split('\n').filter(Boolean);
        expect(lines, stderr).to.have.length(1);
        expect(lines[0]).to.match(new RegExp(`^config error: ${name}\\b`));
        expect(stderr.endsWith('\n')).to.equal(true);
      });
    }
  });
});
