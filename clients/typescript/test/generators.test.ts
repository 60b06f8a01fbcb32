/**
 * The contract for every generator: openapi-typescript and @hey-api/openapi-ts generate a client
 * from docs/openapi.json without a warning, and a small program type-checks against each (with
 * @ts-expect-error lines that fail if a typing fix regresses).
 */
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { promisify, stripVTControlCharacters } from 'node:util';
import { expect } from 'chai';
import ts from 'typescript';

const run = promisify(execFile);
const here = new URL('./', import.meta.url);
const contract = new URL('../../../docs/openapi.json', import.meta.url).pathname;
const bin = (name: string) => new URL(`../../../node_modules/.bin/${name}`, import.meta.url).pathname;
const work = new URL('../test-artifacts/generators/', import.meta.url);

/** The generator's output lines that warn or fail (colour codes stripped). */
const complaints = (output: string) =>
  stripVTControlCharacters(output)
    .split('\n')
    .filter((line) => /warn|⚠|error|deprecat/i.test(line));

/** Type errors of a program: as Node ESM, or as a bundler resolves (hey-api imports without extensions). */
function typeErrors(file: URL, resolution: 'node' | 'bundler'): string[] {
  const program = ts.createProgram([file.pathname], {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    target: ts.ScriptTarget.ES2022,
    module: resolution === 'node' ? ts.ModuleKind.NodeNext : ts.ModuleKind.ESNext,
    moduleResolution: resolution === 'node' ? ts.ModuleResolutionKind.NodeNext : ts.ModuleResolutionKind.Bundler,
    lib: ['lib.es2023.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'],
    types: [],
  });
  return ts
    .getPreEmitDiagnostics(program)
    .map((d) => `${d.file?.fileName ?? ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
}

describe('the contract for generated clients', function () {
  this.timeout(180_000);
  before(() => {
    rmSync(work, { recursive: true, force: true });
    mkdirSync(work, { recursive: true });
    // A package of ES modules, so the programs resolve as NodeNext ESM.
    copyFileSync(new URL('../package.json', import.meta.url), new URL('package.json', work));
  });

  it('openapi-typescript generates without warnings, and an openapi-fetch program type-checks', async () => {
    const { stdout, stderr } = await run(bin('openapi-typescript'), [contract, '-o', `${work.pathname}openapi.ts`]);
    expect(complaints(stdout + stderr)).to.deep.equal([]);
    copyFileSync(new URL('programs/openapi-fetch.ts', here), new URL('openapi-fetch.ts', work));
    expect(typeErrors(new URL('openapi-fetch.ts', work), 'node')).to.deep.equal([]);
  });

  it('@hey-api/openapi-ts generates without warnings, and a program on its SDK type-checks', async () => {
    const { stdout, stderr } = await run(bin('openapi-ts'), ['-i', contract, '-o', `${work.pathname}hey`]);
    expect(complaints(stdout + stderr)).to.deep.equal([]);
    copyFileSync(new URL('programs/hey-api.ts', here), new URL('hey-api.ts', work));
    expect(typeErrors(new URL('hey-api.ts', work), 'bundler')).to.deep.equal([]);
  });
});
