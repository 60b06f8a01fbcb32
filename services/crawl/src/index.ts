/** What other packages (the test harness, benchmarks) may use of the crawl service; main.ts is the process. */

export { natsResourceNames } from './jobs/nats-transport.js';
export type { JobStore } from './jobs/store.js';
export { SqliteJobStore } from './jobs/store-sqlite.js';
export type * from './model.js';
export { LinkCollector } from './page/links.js';
