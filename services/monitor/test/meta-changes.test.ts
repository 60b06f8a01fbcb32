import { expect } from 'chai';
import { type CheckStatus, compareMetaScans, type MetaScanResult } from '../src/meta-changes.js';

/** A scan whose checks have the statuses given; the score is the share of checks that pass. */
function scan(statuses: Record<string, CheckStatus>): MetaScanResult {
  const ids = Object.keys(statuses);
  const finalScore = Math.round((100 * ids.filter((id) => statuses[id] === 'pass').length) / ids.length);
  return {
    url: 'https://example.test/',
    finalScore,
    grade: finalScore >= 90 ? 'A' : finalScore >= 50 ? 'C' : 'F',
    categories: [
      {
        id: 'basic',
        results: ids.map((id) => ({ id, value: null, status: statuses[id]!, message: `${id} is ${statuses[id]}` })),
      },
    ],
  };
}

describe('compareMetaScans', () => {
  const first = {
    meta_title: 'pass',
    meta_description: 'pass',
    meta_author: 'warning',
    meta_keywords: 'fail',
  } as const;

  it('lists each check whose status changed, worse or better, and the score', () => {
    const second = { ...first, meta_title: 'fail', meta_keywords: 'pass' } as const;
    const changes = compareMetaScans(scan(first), scan(second));
    const expected = Object.keys(second).filter(
      (id) => first[id as keyof typeof first] !== second[id as keyof typeof second],
    );
    expect(changes.checks.map((c) => c.id)).to.deep.equal(expected);
    expect(changes.checks.find((c) => c.id === 'meta_title')).to.include({
      from: 'pass',
      to: 'fail',
      direction: 'worse',
    });
    expect(changes.checks.find((c) => c.id === 'meta_keywords')).to.include({
      from: 'fail',
      to: 'pass',
      direction: 'better',
    });
    expect(changes.score).to.deep.equal({ from: scan(first).finalScore, to: scan(second).finalScore });
    expect(changes.alert).to.equal(true);
    expect(changes.lines.join('\n')).to.include('meta_title: pass → fail');
  });

  it('only improvements: recorded, no alert', () => {
    const changes = compareMetaScans(scan(first), scan({ ...first, meta_author: 'pass' }));
    expect(changes.checks).to.have.length(1);
    expect(changes.score.to).to.be.greaterThan(changes.score.from!);
    expect(changes.alert).to.equal(false);
  });

  it('a check new to the run alerts unless it passes; one gone is noted', () => {
    const { meta_keywords: _gone, ...rest } = first;
    const changes = compareMetaScans(scan(first), scan({ ...rest, og_title: 'fail' }));
    expect(changes.checks).to.deep.include({
      category: 'basic',
      id: 'og_title',
      from: null,
      to: 'fail',
      direction: 'worse',
      message: 'og_title is fail',
    });
    expect(changes.checks.find((c) => c.id === 'meta_keywords')).to.include({ from: 'fail', to: null });
    expect(changes.alert).to.equal(true);
  });

  it('the first run and an unchanged run have no changes', () => {
    const firstRun = compareMetaScans(undefined, scan(first));
    expect(firstRun).to.include({ alert: false });
    expect(firstRun.checks).to.deep.equal([]);
    const same = compareMetaScans(scan(first), scan(first));
    expect(same.checks).to.deep.equal([]);
    expect(same.lines).to.deep.equal([]);
    expect(same.alert).to.equal(false);
  });
});
