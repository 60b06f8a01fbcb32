import { expect } from 'chai';
import { REPO_ROOT } from '../src/local-stack.js';
import { misnamedTests, repositoryMisnamedTests } from '../src/test-names.js';

/** Issue 38, item 4: a test that starts a whole stack carries `.e2e`, which `npm run test:unit` leaves out. */
describe('test names', () => {
  it('every test that starts a stack is named *.e2e.test.ts', () => {
    expect(repositoryMisnamedTests(REPO_ROOT), 'rename these to *.e2e.test.ts (git mv)').to.deep.equal([]);
  });

  it('flags a test that starts a stack, directly or through a helper, without .e2e', () => {
    const files = [
      { file: 'edge/test/direct.test.ts', source: 'const stack = await startTestStack({ edges: 2 });' },
      { file: 'edge/test/direct.e2e.test.ts', source: 'const stack = await startTestStack();' },
      {
        file: 'edge/test/area-helpers.ts',
        source:
          'export async function startAreaStack() {\n  return startTestStack();\n}\n' +
          'export function parse(text: string) {\n  return JSON.parse(text);\n}\n',
      },
      { file: 'edge/test/through-helper.test.ts', source: "const stack = await startAreaStack();\nparse('{}');" },
      { file: 'edge/test/pure.test.ts', source: "parse('{}');" },
    ];
    expect(misnamedTests(files)).to.deep.equal(['edge/test/direct.test.ts', 'edge/test/through-helper.test.ts']);
  });
});
