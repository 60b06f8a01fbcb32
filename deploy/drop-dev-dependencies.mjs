// Drops devDependencies from the root's and every workspace's package.json and from their entries in
// package-lock.json, so `npm ci --omit=dev --workspace X` installs X's production closure only (see
// deploy/Dockerfile, stage deps). Run in the image's /app, which holds only the manifests and the lock.
import { readFileSync, writeFileSync } from 'node:fs';

const lock = JSON.parse(readFileSync('package-lock.json', 'utf8'));
for (const [folder, entry] of Object.entries(lock.packages)) {
  if (folder.split('/').includes('node_modules')) continue; // an installed package, not a workspace
  const file = folder ? `${folder}/package.json` : 'package.json';
  const manifest = JSON.parse(readFileSync(file, 'utf8'));
  delete manifest.devDependencies;
  delete entry.devDependencies;
  writeFileSync(file, JSON.stringify(manifest, null, 2));
}
writeFileSync('package-lock.json', JSON.stringify(lock, null, 2));
