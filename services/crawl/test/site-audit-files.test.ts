import { expect } from 'chai';
import { robotsProblems } from '../src/site-audit/site-files.js';

describe('site audit: robots.txt lines', () => {
  it('accepts RFC 9309 groups, comments, blank lines and the common extensions', () => {
    const text = [
      '# a comment',
      'User-agent: *',
      'Disallow: /private/ # why',
      'Allow: /private/open',
      'Disallow:',
      'Crawl-delay: 1.5',
      '',
      'User-agent: WebUtilBot',
      'Disallow: *.pdf',
      'Sitemap: https://example.com/sitemap.xml',
      'Host: example.com',
    ].join('\r\n');
    expect(robotsProblems(text)).to.deep.equal([]);
  });

  it('names each line crawlers cannot read, by its number', () => {
    const text = [
      'Disallow: /early',
      'User-agent: *',
      'Disalow: /typo',
      'Disallow: private',
      'just words',
      'Sitemap: /sitemap.xml',
      'Crawl-delay: soon',
      'User-agent:',
    ].join('\n');
    expect(robotsProblems(text)).to.deep.equal([
      'line 1: Disallow before any user-agent line',
      'line 3: unknown field "Disalow"',
      'line 4: Disallow path does not start with /',
      'line 5: not a "field: value" line',
      'line 6: the sitemap URL is not absolute',
      'line 7: crawl-delay is not a number of seconds',
      'line 8: empty user-agent',
    ]);
  });
});
