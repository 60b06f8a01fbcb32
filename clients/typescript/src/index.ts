export {
  type BrokenLinksCrawlOptions,
  type BrokenLinksOptions,
  type CallOptions,
  type DownCheckQuery,
  type ExportFormat,
  type JobKind,
  type Jobs,
  type LinkExtractQuery,
  type MetaScanQuery,
  type PdfOptions,
  type Schemas,
  type ScreenshotOptions,
  type SslScanQuery,
  type Upload,
  type WaitOptions,
  Webutil,
  type WebutilOptions,
} from './client.js';
export { WebutilError } from './errors.js';
export { WebutilFile } from './files.js';
export type { components, operations, paths } from './generated/openapi.js';
export { OPERATIONS, type Operation, type OperationOption } from './generated/operations.js';
export { spendsCredits } from './retry.js';
export { verifyWebhook } from './webhooks.js';
