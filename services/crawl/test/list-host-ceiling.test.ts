import { expect } from 'chai';
import { byHost, LIST_HOST_CEILING } from '../src/bookmark-check/check-bookmarks.js';
import type { FoundLink } from '../src/model.js';

describe('a list job’s checks per host (byHost)', () => {
  it(`holds one host to ${LIST_HOST_CEILING} checks in flight however high its throttle limit`, async () => {
    const links = Array.from({ length: 200 }, (_, i) => ({ url: `https://one.example/${i}` }) as FoundLink);
    let inFlight = 0;
    let peak = 0;
    let done = 0;
    await byHost(
      links,
      () => 64, // a crawl's per-host maximum
      async () => {
        peak = Math.max(peak, ++inFlight);
        await new Promise((resolve) => setTimeout(resolve, 2));
        inFlight--;
        done++;
      },
    );
    expect(done).to.equal(200);
    expect(peak).to.equal(LIST_HOST_CEILING);
  });
});
