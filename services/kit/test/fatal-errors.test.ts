import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { FATAL_EXIT_CODE } from '../src/fatal-errors.js';

const kit = fileURLToPath(new URL('../src/index.ts', import.meta.url));

/** A process like a service's: the kit's logger and fatal-error handling, kept alive by a timer, then `fault`. */
function runChild(fault: string): Promise<{ code: number | null; lines: Record<string, any>[] }> {
  const script = `
    const { createLogger, exitOnFatalErrors } = await import(${JSON.stringify(kit)});
    const log = createLogger('fatal-test', 'info');
    exitOnFatalErrors(log);
    setInterval(() => undefined, 1000);
    log.info('serving');
    setTimeout(() => { ${fault} }, 50);
  `;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: fileURLToPath(new URL('.', import.meta.url)),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const lines = stdout
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, any>);
      resolve({ code, lines });
    });
  });
}

describe('an error nothing handled, in a service process (child process)', function () {
  this.timeout(30_000);

  for (const [kind, fault] of [
    ['unhandledRejection', "void Promise.reject(new Error('a close nobody awaited'));"],
    ['uncaughtException', "throw new Error('a close nobody awaited');"],
  ] as const) {
    it(`${kind}: one fatal log line with the error and the count, then a non-zero exit`, async () => {
      const { code, lines } = await runChild(fault);
      expect(code).to.equal(FATAL_EXIT_CODE);
      expect(lines.map((l) => l.msg)[0]).to.equal('serving');
      const fatal = lines.filter((l) => l.level === 60);
      expect(fatal, JSON.stringify(lines)).to.have.length(1);
      expect(fatal[0]).to.include({ service: 'fatal-test', kind, fatalErrors: 1 });
      expect(fatal[0]?.err?.message).to.equal('a close nobody awaited');
      expect(fatal[0]?.msg).to.match(new RegExp(`^${kind}: .*exiting with status ${FATAL_EXIT_CODE}`));
    });
  }
});
