// Type-checked against openapi-typescript's output of docs/openapi.json (test/generators.test.ts):
// JSON answers are typed as JSON, query flags and integers as booleans and numbers, errors by code.
import createClient from 'openapi-fetch';
import type { paths } from './openapi.js';

const api = createClient<paths>({ baseUrl: 'http://localhost:8080' });

export async function program(): Promise<void> {
  const shot = await api.POST('/v1/screenshot', {
    body: { url: 'https://example.com/', viewport: { width: 1280, height: 800 } },
  });
  if (shot.data) {
    const name: string = shot.data.filename;
    const format: 'png' | 'jpeg' | 'webp' = shot.data.format;
    void [name, format];
  }
  if (shot.error) {
    const code: string = shot.error.error.code;
    // @ts-expect-error a code the route never answers is not one of its codes
    const never: typeof shot.error.error.code = 'no_such_code';
    void [code, never];
  }
  const tls = await api.GET('/v1/ssl-scan', { params: { query: { domain: 'example.com', port: 443 } } });
  if (tls.data) {
    const grade: string = tls.data.data.securityGrade;
    void grade;
  }
  // @ts-expect-error port is an integer, not text
  await api.GET('/v1/ssl-scan', { params: { query: { domain: 'example.com', port: '443' } } });
  await api.GET('/v1/link-extract', { params: { query: { url: 'https://example.com/', includeResources: true } } });
  await api.GET('/v1/webhooks/deliveries', { params: { query: { limit: 20 } } });
  const job = await api.GET('/v1/broken-links/crawl/{job_id}', { params: { path: { job_id: 'j' } } });
  if (job.data) {
    const status: 'crawling' | 'done' | 'failed' = job.data.data.status;
    const checked: number = job.data.data.progress.linksChecked;
    void [status, checked];
  }
  const sarif = await api.GET('/v1/broken-links/crawl/{job_id}/export', {
    params: { path: { job_id: 'j' }, query: { format: 'sarif' } },
    parseAs: 'text',
  });
  if (sarif.data) {
    const text: string = sarif.data;
    void text;
  }
}
