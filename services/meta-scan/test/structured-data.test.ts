import { expect } from 'chai';
import { readStructuredData } from '../src/structured-data.js';

const block = (value: unknown) => ({
  text: typeof value === 'string' ? value : JSON.stringify(value),
  truncated: false,
});

describe('readStructuredData', () => {
  it('finds the types of items, arrays and @graph members, each once, by any schema.org spelling', () => {
    const data = readStructuredData([
      block([{ '@type': 'https://schema.org/WebSite', name: 'S', url: '/' }, { '@type': ['Organization'] }]),
      block({ '@graph': [{ '@type': 'schema:WebSite', name: 'S', url: '/' }] }),
    ]);
    expect(data.types).to.deep.equal(['WebSite', 'Organization']);
    expect(data.missing).to.deep.equal(['Organization lacks name, url']);
    expect(data.syntaxErrors).to.deep.equal([]);
  });

  it('checks breadcrumb entries and FAQ answers, not only the list', () => {
    const data = readStructuredData([
      block({
        '@type': 'BreadcrumbList',
        itemListElement: [
          { '@type': 'ListItem', position: 1, name: 'Home', item: '/' },
          { '@type': 'ListItem', name: 'No position' },
        ],
      }),
      block({
        '@type': 'FAQPage',
        mainEntity: [
          { '@type': 'Question', name: 'Q?', acceptedAnswer: { text: 'A.' } },
          { '@type': 'Question', name: 'Unanswered?' },
        ],
      }),
    ]);
    expect(data.missing).to.deep.equal([
      'BreadcrumbList lacks position and name on 1 itemListElement entry',
      'FAQPage lacks name and acceptedAnswer.text on 1 question',
    ]);
  });

  it('reports a syntax error with its line and column, and a block cut off unparsed', () => {
    // V8 gives the position of this kind of error (not of every kind: then the message stands alone).
    const data = readStructuredData([
      block('{\n  "@type": "Product"\n  "name": "P"\n}'),
      { text: '{', truncated: true },
    ]);
    expect(data.syntaxErrors).to.have.length(2);
    expect(data.syntaxErrors[0]).to.equal("block 1: Expected ',' or '}' after property value at line 3, column 3");
    expect(data.syntaxErrors[1]).to.equal('block 2 is longer than the audit reads; it was not parsed');
  });

  it('stops walking after 500 typed nodes', () => {
    const many = Array.from({ length: 2_000 }, (_, i) => ({ '@type': `T${i}` }));
    expect(readStructuredData([block(many)]).types).to.have.length(500);
  });
});
