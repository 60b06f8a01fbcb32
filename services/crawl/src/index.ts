/** What other packages (the test harness, benchmarks) may use of the crawl service. */

export { natsResourceNames } from './jobs/nats-transport.js';
export type { JobStore } from './jobs/store.js';
export { SqliteJobStore } from './jobs/store-sqlite.js';
export type * from './model.js';
export { LinkCollector } from './page/links.js';
export { type CrawlService, createCrawlService, runCrawlService } from './service.js';
export { type CrawlSettings, readCrawlSettings } from './settings.js';
