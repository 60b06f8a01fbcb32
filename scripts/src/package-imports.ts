/**
 * Issue 7, item 10: tests and benchmarks import only their own package and, from others, what a
 * package exports by name (`@webutil/scripts/test-stack`), never another package's files by a
 * relative path (`../../../scripts/src/fixture-site.js`), which bypasses its build and its exports.
 * `scripts/test/package-imports.test.ts` runs this over the repository.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

export interface CrossPackageImport {
  /** The importing file, relative to the repository root. */
  file: string;
  /** The specifier as written. */
  specifier: string;
  /** The package (workspace folder) the specifier lands in. */
  target: string;
}

/** The workspace folders of the root package.json, e.g. services/kit, edge, scripts. */
export function workspaces(repoRoot: string): string[] {
  const manifest = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { workspaces: string[] };
  return manifest.workspaces;
}

/** The workspace a repository-relative path belongs to; other top-level folders (deploy) count as their own. */
export function packageOf(relativePath: string, packages: readonly string[]): string {
  const owner = packages
    .filter((pkg) => relativePath === pkg || relativePath.startsWith(`${pkg}/`))
    .sort((a, b) => b.length - a.length)[0];
  return owner ?? relativePath.split('/')[0] ?? relativePath;
}

/** Every module specifier of a TypeScript source: static and dynamic imports, re-exports. */
export const specifiersOf = (source: string): string[] =>
  ts.preProcessFile(source, true, true).importedFiles.map((imported) => imported.fileName);

/**
 * The relative imports of `file` (repository-relative) that land in another package. A package
 * name, a node: built-in, or a path within the file's own package is fine.
 */
export function crossPackageImports(file: string, source: string, packages: readonly string[]): CrossPackageImport[] {
  const own = packageOf(file, packages);
  return specifiersOf(source)
    .filter((specifier) => specifier.startsWith('./') || specifier.startsWith('../'))
    .flatMap((specifier) => {
      const landing = path.posix.normalize(path.posix.join(path.posix.dirname(file), specifier));
      const target = packageOf(landing, packages);
      return target === own || !packages.includes(target) ? [] : [{ file, specifier, target }];
    });
}

/** TypeScript files under every `test/` and `bench/` folder of the repository (not node_modules, dist). */
export function testAndBenchFiles(repoRoot: string): string[] {
  const files: string[] = [];
  const walk = (dir: string, inside: boolean) => {
    for (const entry of readdirSync(path.join(repoRoot, dir), { withFileTypes: true })) {
      if (entry.name.startsWith('.') || entry.name === 'node_modules' || entry.name === 'dist') continue;
      const relative = dir ? `${dir}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(relative, inside || entry.name === 'test' || entry.name === 'bench');
      else if (inside && /\.(ts|mts|cts|js|mjs)$/.test(entry.name) && !entry.name.endsWith('.d.ts'))
        files.push(relative);
    }
  };
  walk('', false);
  return files.sort();
}

/** Every cross-package relative import of the repository's tests and benchmarks. */
export function repositoryCrossPackageImports(repoRoot: string): CrossPackageImport[] {
  const packages = workspaces(repoRoot);
  return testAndBenchFiles(repoRoot).flatMap((file) =>
    crossPackageImports(file, readFileSync(path.join(repoRoot, file), 'utf8'), packages),
  );
}
