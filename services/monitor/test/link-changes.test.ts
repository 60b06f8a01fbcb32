import { expect } from 'chai';
import { compareLinkCrawls, type LinkCrawlResult, type LinkRecord } from '../src/link-changes.js';

/** A crawl whose links answer with the statuses given (null: no answer); 4xx, 5xx and null are broken. */
function crawl(statuses: Record<string, number | null>, truncatedPages = false): LinkCrawlResult {
  const links: LinkRecord[] = Object.entries(statuses).map(([path, statusCode]) => ({
    url: `https://example.test${path}`,
    statusCode,
    statusText: statusCode === null ? 'ECONNREFUSED' : String(statusCode),
    severity: statusCode === null || statusCode >= 400 ? 'broken' : 'ok',
    sources: ['https://example.test/', 'https://example.test/about'],
    sourceCount: 2,
  }));
  return { links, summary: { broken: links.filter((l) => l.severity === 'broken').length }, truncatedPages };
}

const brokenIn = (statuses: Record<string, number | null>) =>
  Object.keys(statuses).filter((path) => statuses[path] === null || statuses[path]! >= 400);

describe('compareLinkCrawls', () => {
  const first = { '/a': 200, '/b': 404, '/c': null, '/d': 200, '/e': 500 };
  const second = { '/a': 404, '/b': 404, '/c': 200, '/d': 200, '/f': 410 };

  it('lists links newly broken and links fixed (answering again or no longer linked)', () => {
    const changes = compareLinkCrawls(crawl(first), crawl(second));
    const wasBroken = new Set(brokenIn(first));
    const expectedNew = brokenIn(second).filter((path) => !wasBroken.has(path));
    expect(changes.newlyBroken.map((l) => l.url)).to.deep.equal(expectedNew.map((p) => `https://example.test${p}`));
    expect(changes.fixed).to.deep.equal([
      { url: 'https://example.test/c', how: 'answers', statusCode: 200 },
      { url: 'https://example.test/e', how: 'removed', statusCode: null },
    ]);
    expect(changes.broken).to.equal(brokenIn(second).length);
    expect(changes.alert).to.equal(true);
    expect(changes.lines[0]).to.equal(`${expectedNew.length} newly broken links:`);
    expect(changes.lines[1]).to.equal('- https://example.test/a (404) on https://example.test/ and 1 more');
  });

  it('a capped crawl does not call a missing link fixed', () => {
    const changes = compareLinkCrawls(crawl(first), crawl(second, true));
    expect(changes.fixed.map((l) => l.how)).to.deep.equal(['answers']);
  });

  it('the first run reports every broken link as new; an unchanged run nothing', () => {
    expect(compareLinkCrawls(undefined, crawl(first)).newlyBroken).to.have.length(brokenIn(first).length);
    const same = compareLinkCrawls(crawl(first), crawl(first));
    expect(same).to.include({ alert: false });
    expect(same.newlyBroken).to.deep.equal([]);
    expect(same.fixed).to.deep.equal([]);
    expect(same.lines).to.deep.equal([]);
  });

  it('names at most ten links in its lines and counts the rest', () => {
    const many = Object.fromEntries(Array.from({ length: 25 }, (_, i) => [`/gone-${i}`, 404]));
    const changes = compareLinkCrawls(crawl({}), crawl(many));
    expect(changes.newlyBroken).to.have.length(25);
    expect(changes.lines).to.have.length(1 + 10 + 1);
    expect(changes.lines.at(-1)).to.equal('- and 15 more');
  });
});
