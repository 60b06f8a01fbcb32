// Builds the website into edge/dist/web: esbuild bundles and minifies the pages' TypeScript and
// CSS under content-hashed names, the shell links them, and each text file gets a .gz beside it
// (the edge serves it to browsers that accept gzip). The files of public/ (favicon, robots.txt)
// are copied to public/ beside the shell as they are. Prints the compressed JavaScript size.
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const here = path.dirname(fileURLToPath(import.meta.url));
const out = path.join(here, '../dist/web');
rmSync(out, { recursive: true, force: true });
mkdirSync(path.join(out, 'assets'), { recursive: true });

const result = await build({
  entryPoints: [path.join(here, 'src/main.ts'), path.join(here, 'src/style.css')],
  outdir: path.join(out, 'assets'),
  entryNames: '[name]-[hash]',
  chunkNames: '[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  minify: true,
  target: ['chrome110', 'firefox115', 'safari16'],
  metafile: true,
  logLevel: 'warning',
});

const outputs = Object.entries(result.metafile.outputs);
const named = (entry) => path.basename(outputs.find(([, o]) => o.entryPoint?.endsWith(entry))[0]);
const shell = readFileSync(path.join(here, 'index.html'), 'utf8')
  .replace('{{script}}', `/assets/${named('src/main.ts')}`)
  .replace('{{style}}', `/assets/${named('src/style.css')}`);
writeFileSync(path.join(out, 'index.html'), shell);

mkdirSync(path.join(out, 'public'));
const publicFiles = readdirSync(path.join(here, 'public')).map((name) => {
  copyFileSync(path.join(here, 'public', name), path.join(out, 'public', name));
  return path.join(out, 'public', name);
});

let jsGzip = 0;
for (const file of [...outputs.map(([file]) => file), path.join(out, 'index.html'), ...publicFiles]) {
  const gz = gzipSync(readFileSync(file), { level: 9 });
  writeFileSync(`${file}.gz`, gz);
  if (file.endsWith('.js')) jsGzip += gz.length;
}
console.log(`website: ${outputs.length} assets, ${(jsGzip / 1024).toFixed(1)} KB of gzipped JavaScript in all`);
