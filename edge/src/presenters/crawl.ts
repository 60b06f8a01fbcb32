/** Where the crawl service's replies differ in shape from the spec's JSON. */
import type { ExtractLinksResponse } from '@webutil/proto/webutil/crawl/v1/crawl';

/** The one-page extraction's fields are the reply's `result`. */
export const presentExtract = (reply: ExtractLinksResponse) => reply.result;
