/** Build step (`npm run build`): docs/openapi.json and its index docs/api.md, from the route table. */
import { writeFileSync } from 'node:fs';
import { apiIndex } from './api-index.js';
import { failureStatuses, openApiJson } from './openapi.js';
import { downloads, routes } from './routes.js';

writeFileSync(new URL('../../docs/openapi.json', import.meta.url), openApiJson(routes, downloads));
writeFileSync(new URL('../../docs/api.md', import.meta.url), apiIndex(routes, downloads, failureStatuses));
