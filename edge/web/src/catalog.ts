/**
 * What the site sells: each tool in one line with an example of its result, and the plans. The
 * credit cost of each tool is read from the contract (`x-credits`), never written here.
 */

export interface Tool {
  id: string;
  title: string;
  /** What it does, in one line. */
  pitch: string;
  /** What a result looks like, in a few words. */
  example: string;
}

/** The operations a visitor can try, in the order the spec lists them. */
export const TOOLS: readonly Tool[] = [
  {
    id: 'down-check',
    title: 'Down check',
    pitch: 'Is the site up? One request, its status, address and response time.',
    example: 'UP · 200 in 184 ms · 93.184.215.14',
  },
  {
    id: 'meta-scan',
    title: 'Meta tag audit',
    pitch: 'Checks the title, description, Open Graph, Twitter and technical tags of a page.',
    example: 'Grade B · 21 passed, 3 warnings, 1 failed',
  },
  {
    id: 'ssl-scan',
    title: 'SSL scan',
    pitch: 'Grades a domain’s TLS: protocol, cipher, certificate chain and expiry.',
    example: 'Grade A · TLSv1.3 · expires in 61 days',
  },
  {
    id: 'link-extract',
    title: 'Link extract',
    pitch: 'Lists every link of a page with its text, type and rel.',
    example: '148 links · 121 internal · 27 external',
  },
  {
    id: 'link-extract-crawl',
    title: 'Link extract (site crawl)',
    pitch: 'Crawls a whole site and lists each link with the pages it was found on.',
    example: '250 pages · 3,000 links with their sources',
  },
  {
    id: 'broken-links',
    title: 'Broken links',
    pitch: 'Checks every link, image, script and stylesheet of a page and explains each failure.',
    example: 'Health 96 · 2 broken, 5 redirects',
  },
  {
    id: 'broken-links-crawl',
    title: 'Broken links (site crawl)',
    pitch: 'Crawls a site, checks its links and shows where each broken one is used.',
    example: '120 pages · 1,480 links · 7 broken',
  },
  {
    id: 'site-audit',
    title: 'Site audit',
    pitch: 'Audits every page of a site for SEO and technical issues, with scores and a shareable report.',
    example: 'Health 82 · 940 pages · 14 issue types',
  },
  {
    id: 'screenshot',
    title: 'Screenshot',
    pitch: 'A full-page PNG, JPEG or WebP of any page, desktop or mobile, light or dark.',
    example: '1366 × 4210 PNG, 812 KB',
  },
  {
    id: 'url-to-pdf',
    title: 'URL to PDF',
    pitch: 'Prints a page to PDF in A4, Letter and more, portrait or landscape.',
    example: 'A4 portrait, 6 pages, 1.2 MB',
  },
  {
    id: 'bookmarks-check',
    title: 'Bookmark health',
    pitch: 'Checks every bookmark of an XBEL, Floccus or browser HTML file and gives back the file without dead links.',
    example: '1,204 bookmarks · 87 broken · 41 moved · 12 duplicates',
  },
  {
    id: 'xbel-decrypt',
    title: 'XBEL decrypt',
    pitch: 'Decrypts a bookmark file encrypted by Floccus.',
    example: 'bookmarks.xbel, ready to download',
  },
  {
    id: 'xbel-to-html',
    title: 'XBEL to HTML',
    pitch: 'Turns an XBEL bookmark file into the HTML every browser imports.',
    example: 'bookmarks.html, ready to download',
  },
  {
    id: 'html-to-xbel',
    title: 'HTML to XBEL',
    pitch: 'Turns a browser’s bookmark export (HTML) into an XBEL file, folders and dates kept.',
    example: 'bookmarks.xbel, ready to download',
  },
];

export const toolById = (id: string): Tool | undefined => TOOLS.find((tool) => tool.id === id);

export interface PlanRow {
  name: string;
  creditsPerCycle: number;
  requestsPerMinute: number;
  /** Screenshots and PDFs rendered at once. */
  renderConcurrency: number;
  apiKeys: boolean;
}

/** The plan table of services/billing/src/plans.ts, as sold (decision 0163). */
export const PLANS: readonly PlanRow[] = [
  { name: 'Free', creditsPerCycle: 100, requestsPerMinute: 30, renderConcurrency: 2, apiKeys: false },
  { name: 'Starter', creditsPerCycle: 3_000, requestsPerMinute: 60, renderConcurrency: 4, apiKeys: true },
  { name: 'Growth', creditsPerCycle: 15_000, requestsPerMinute: 120, renderConcurrency: 8, apiKeys: true },
  { name: 'Scale', creditsPerCycle: 60_000, requestsPerMinute: 300, renderConcurrency: 8, apiKeys: true },
  { name: 'Enterprise', creditsPerCycle: 250_000, requestsPerMinute: 1_000, renderConcurrency: 16, apiKeys: true },
];

/** Anonymous visitors: per client IP (IPv6: per /64) per UTC day. */
export const ANONYMOUS = { creditsPerDay: 10, requestsPerMinute: 30, renderConcurrency: 2 };

/** How long rendered files stay downloadable (RENDER_FILE_TTL_MS's default). */
export const RENDER_FILE_MINUTES = 5;
