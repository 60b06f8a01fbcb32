import { expect } from 'chai';
import { REPO_ROOT } from '../src/local-stack.js';
import {
  crossPackageImports,
  packageOf,
  repositoryCrossPackageImports,
  testAndBenchFiles,
} from '../src/package-imports.js';

const PACKAGES = ['proto', 'services/kit', 'services/billing', 'edge', 'scripts'];

/** Issue 7, item 10: a test or benchmark reaches another package only through what it exports by name. */
describe('imports across packages', () => {
  it('no test or benchmark imports another package’s files by a relative path', () => {
    const found = repositoryCrossPackageImports(REPO_ROOT);
    expect(
      found.map((i) => `${i.file}: ${i.specifier} (use @webutil/${i.target.split('/').pop()}/…)`),
      'import these through the package name',
    ).to.deep.equal([]);
  });

  it('scans the tests and benchmarks of every package', () => {
    const files = testAndBenchFiles(REPO_ROOT);
    for (const expected of [
      'services/kit/test/safe-http.test.ts',
      'edge/test/readme.e2e.test.ts',
      'scripts/bench/crawl.ts',
      'deploy/test/chart.test.ts',
    ]) {
      expect(files).to.include(expected);
    }
    expect(files.some((file) => file.includes('node_modules') || file.includes('/dist/'))).to.equal(false);
  });

  describe('the rule', () => {
    const flagged = (file: string, source: string) =>
      crossPackageImports(file, source, PACKAGES).map((i) => `${i.specifier} -> ${i.target}`);

    it('flags static, type-only, dynamic and re-exported paths into another package', () => {
      expect(
        flagged(
          'services/kit/test/a.test.ts',
          [
            "import { startFixtureSite } from '../../../scripts/src/fixture-site.js';",
            "import type { Stack } from '../../../scripts/src/local-stack.js';",
            "const { freePort } = await import('../../../scripts/src/local-stack.js');",
            "export { x } from '../../billing/test/helpers.js';",
            "import '../../billing/dist/admin.js';",
          ].join('\n'),
        ),
      ).to.deep.equal([
        '../../../scripts/src/fixture-site.js -> scripts',
        '../../../scripts/src/local-stack.js -> scripts',
        '../../../scripts/src/local-stack.js -> scripts',
        '../../billing/test/helpers.js -> services/billing',
        '../../billing/dist/admin.js -> services/billing',
      ]);
      expect(flagged('edge/test/a.test.ts', "import { x } from '../../scripts/src/fixture-site.js';")).to.have.length(
        1,
      );
    });

    it('allows the own package at any depth, package names, built-ins and files outside every package', () => {
      const source = [
        "import { routes } from '../src/routes.js';",
        "import { helper } from './billing-helpers.js';",
        "import { deep } from '../../src/deep.js';",
        "import { startTestStack } from '@webutil/scripts/test-stack';",
        "import { readFileSync } from 'node:fs';",
        "const openapi = readFileSync(new URL('../../docs/openapi.json', import.meta.url), 'utf8');",
        "import '../../docs/notes.js';",
      ].join('\n');
      expect(flagged('edge/test/a.test.ts', source.replace("'../../src/deep.js'", "'../src/deep.js'"))).to.deep.equal(
        [],
      );
      expect(
        flagged('edge/test/nested/a.test.ts', source.replace("'../src/routes.js'", "'../../src/routes.js'")),
      ).to.deep.equal([]);
      // scripts/bench is the scripts package: its own src is its own.
      expect(flagged('scripts/bench/crawl.ts', "import { x } from '../src/fixture-crawl-site.js';")).to.deep.equal([]);
    });

    it('tells nested workspaces from their parent folder', () => {
      expect(packageOf('services/kit/src/x.ts', PACKAGES)).to.equal('services/kit');
      expect(packageOf('services/billing/test/x.ts', PACKAGES)).to.equal('services/billing');
      expect(packageOf('deploy/test/x.ts', PACKAGES)).to.equal('deploy');
      expect(packageOf('scripts/src/x.ts', PACKAGES)).to.equal('scripts');
    });
  });
});
