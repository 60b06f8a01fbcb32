import { createRequire } from 'node:module';
import path from 'node:path';

/** Directory of the .proto sources and the generated descriptor set (server reflection, Connect). */
export function protoRoot(): string {
  const require = createRequire(import.meta.url);
  return path.dirname(require.resolve('@webutil/proto/package.json'));
}
