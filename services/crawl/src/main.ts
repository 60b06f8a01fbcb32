import { runCrawlService } from './service.js';
import { readCrawlSettings } from './settings.js';

await runCrawlService(readCrawlSettings());
