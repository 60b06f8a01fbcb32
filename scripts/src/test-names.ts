/**
 * Issue 38, item 4: one test-naming rule. A test that starts a whole stack (calls `startTestStack`, or
 * a test helper's exported function that calls it) is named `*.e2e.test.ts`: `npm run test:unit` runs every `*.test.ts`
 * but those, so it starts no stack and needs no fresh build. `scripts/test/test-names.test.ts`
 * runs this over the repository.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { testAndBenchFiles } from './package-imports.js';

export interface SourceFile {
  /** Repository-relative path. */
  file: string;
  source: string;
}

const STACK_STARTER = 'startTestStack';

/** The names of the functions `source` calls (plain calls by name, as a test calls a helper). */
function calledNames(node: ts.Node, names = new Set<string>()): Set<string> {
  if (ts.isCallExpression(node) && ts.isIdentifier(node.expression)) names.add(node.expression.text);
  ts.forEachChild(node, (child) => {
    calledNames(child, names);
  });
  return names;
}

const parse = ({ file, source }: SourceFile) => ts.createSourceFile(file, source, ts.ScriptTarget.Latest);

/** The functions a test helper exports that start a stack. */
function stackStartingExports(helper: SourceFile): string[] {
  return parse(helper).statements.flatMap((statement) =>
    ts.isFunctionDeclaration(statement) &&
    statement.name &&
    statement.modifiers?.some((modifier) => modifier.kind === ts.SyntaxKind.ExportKeyword) &&
    calledNames(statement).has(STACK_STARTER)
      ? [statement.name.text]
      : [],
  );
}

/** The `*.test.ts` files that start a stack, directly or through a helper, yet lack `.e2e`. */
export function misnamedTests(files: readonly SourceFile[]): string[] {
  const isTest = (file: string) => file.endsWith('.test.ts');
  const starters = new Set([STACK_STARTER, ...files.filter(({ file }) => !isTest(file)).flatMap(stackStartingExports)]);
  return files
    .filter((test) => isTest(test.file) && !test.file.endsWith('.e2e.test.ts'))
    .filter((test) => [...calledNames(parse(test))].some((name) => starters.has(name)))
    .map(({ file }) => file);
}

/** The repository's tests (every file under a `test/` folder) that break the rule. */
export function repositoryMisnamedTests(repoRoot: string): string[] {
  const files = testAndBenchFiles(repoRoot)
    .filter((file) => file.split('/').includes('test'))
    .map((file) => ({ file, source: readFileSync(path.join(repoRoot, file), 'utf8') }));
  return misnamedTests(files);
}
