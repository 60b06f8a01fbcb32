import { expect } from 'chai';
import { Parser } from 'htmlparser2';
import { BADGE_STYLES, type BadgeFigure, badgeSvg, badgeText } from '../src/badges.js';

/** The text nodes of an SVG document (badge-maker draws each text twice: shadow and face). */
function textsOf(svg: string): string[] {
  const texts: string[] = [];
  let inText = 0;
  const parser = new Parser({
    onopentag: (name) => void (name === 'text' && inText++),
    onclosetag: (name) => void (name === 'text' && inText--),
    ontext: (text) => void (inText && text.trim() && texts.push(text.trim())),
  });
  parser.write(svg);
  parser.end();
  return texts;
}

describe('badges', () => {
  const cases: [BadgeFigure, string, string, string][] = [
    [{ kind: 'uptime', window: '30d', percent: 99.95 }, 'uptime 30d', '99.95%', 'brightgreen'],
    [{ kind: 'uptime', window: '7d', percent: 99.5 }, 'uptime 7d', '99.5%', 'green'],
    [{ kind: 'uptime', window: '24h', percent: 80 }, 'uptime 24h', '80%', 'red'],
    [{ kind: 'uptime', window: '24h', percent: null }, 'uptime 24h', 'no data', 'lightgrey'],
    [{ kind: 'ssl', daysUntilExpiry: 60 }, 'ssl', '60 days left', 'brightgreen'],
    [{ kind: 'ssl', daysUntilExpiry: 10 }, 'ssl', '10 days left', 'orange'],
    [{ kind: 'ssl', daysUntilExpiry: 1 }, 'ssl', '1 day left', 'red'],
    [{ kind: 'ssl', daysUntilExpiry: -2 }, 'ssl', 'expired', 'red'],
    [{ kind: 'broken-links', broken: 0 }, 'broken links', '0', 'brightgreen'],
    [{ kind: 'broken-links', broken: 7 }, 'broken links', '7', 'red'],
  ];
  for (const [figure, label, message, color] of cases) {
    it(`${JSON.stringify(figure)} -> ${label}: ${message} (${color})`, () => {
      expect(badgeText(figure)).to.deep.equal({ label, message, color });
      const svg = badgeSvg(figure);
      expect(svg).to.match(/^<svg [^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
      expect(textsOf(svg)).to.include(label).and.include(message);
      expect(svg).to.include(`<title>${label}: ${message}</title>`);
    });
  }

  it('draws every style, each a different document', () => {
    const figure: BadgeFigure = { kind: 'uptime', window: '90d', percent: 99.99 };
    const svgs = new Set(BADGE_STYLES.map((style) => badgeSvg(figure, style)));
    expect(svgs.size).to.equal(BADGE_STYLES.length);
  });
});
