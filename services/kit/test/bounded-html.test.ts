import { expect } from 'chai';
import { BoundedParser, HTML_OPTIONS, MAX_HTML_DEPTH } from '../src/bounded-html.js';

/** A liveness bound: the unbounded parse of these inputs took tens of seconds; a bounded one takes milliseconds. */
const BOUND_MS = 2_000;

function elapsed(run: () => void): number {
  const started = performance.now();
  run();
  return performance.now() - started;
}

describe('bounded HTML parsing', () => {
  it('stops a document nested deeper than MAX_HTML_DEPTH, at once', () => {
    const opened: string[] = [];
    const parser = new BoundedParser({ onopentag: (name) => opened.push(name) }, HTML_OPTIONS);
    const ms = elapsed(() => {
      for (let i = 0; i < 16; i++) parser.write('<b>'.repeat(20_000));
      parser.end();
    });
    expect(parser.tooDeep).to.equal(true);
    expect(opened).to.have.length(MAX_HTML_DEPTH);
    expect(ms).to.be.below(BOUND_MS);
  });

  it('reads deep but not too deep markup, void elements and implied closes included, to its end', () => {
    const names: string[] = [];
    const parser = new BoundedParser({ onopentag: (name) => names.push(name) }, HTML_OPTIONS);
    // 10,000 siblings that close implicitly (<p>, <li>) or never need to (<br>, <img>) stay shallow.
    parser.write(`<div>${'<p>x<br><img src=a.png>'.repeat(10_000)}<ul>${'<li>y'.repeat(10_000)}</ul>`);
    parser.write(`${'<span>'.repeat(MAX_HTML_DEPTH - 10)}<a href="/deep">deep</a>`);
    parser.end();
    expect(parser.tooDeep).to.equal(false);
    expect(names.at(-1)).to.equal('a');
  });

  it('stops where its reader says, inside the current chunk', () => {
    const opened: string[] = [];
    const parser: BoundedParser = new BoundedParser(
      {
        onopentag: (name) => {
          opened.push(name);
          if (name === 'body') parser.stop();
        },
      },
      HTML_OPTIONS,
    );
    parser.write('<html><head><title>t</title></head><body><p>never read</p></body></html>');
    parser.end();
    expect(opened).to.deep.equal(['html', 'head', 'title', 'body']);
    expect(parser.stopped).to.equal(true);
    expect(parser.tooDeep).to.equal(false);
  });
});
