import { expect } from 'chai';
import { parseTargetHost } from '../src/target-host.js';

describe('parseTargetHost', () => {
  const accepted: [string, string, boolean][] = [
    ['example.com', 'example.com', false],
    ['  Example.COM.  ', 'example.com', false],
    ['bücher.de', 'xn--bcher-kva.de', false],
    ['_dmarc.example.com', '_dmarc.example.com', false],
    ['localhost', 'localhost', false],
    ['127.0.0.1', '127.0.0.1', true],
    ['0x7f000001', '127.0.0.1', true],
    ['[::1]', '::1', true],
    ['2001:DB8::1', '2001:db8::1', true],
  ];
  for (const [input, name, isIp] of accepted) {
    it(`accepts ${JSON.stringify(input)} as ${name}`, () =>
      expect(parseTargetHost(input)).to.deep.equal({ name, isIp }));
  }

  const refused: [string, RegExp][] = [
    ['', /empty/],
    ['https://example.com', /remove the scheme/],
    ['HTTP://example.com/', /remove the scheme/],
    ['example.com/path', /remove the path/],
    ['example.com?q', /remove the path/],
    ['example.com#top', /remove the path/],
    ['example.com:443', /remove the port/],
    ['[::1]:443', /remove the port/],
    ['user:pw@example.com', /remove the user name/],
    ['exa mple.com', /characters a host name cannot have/],
    ['%65xample.com', /characters a host name cannot have/],
    ['*.example.com', /not a valid host name/],
    ['a..b', /not a valid host name/],
    ['-a.example.com', /not a valid host name/],
    [`${'a'.repeat(64)}.com`, /not a valid host name/],
    [`${'a.'.repeat(127)}com`, /not a valid host name/],
  ];
  for (const [input, why] of refused) {
    it(`refuses ${JSON.stringify(input.slice(0, 40))}`, () => {
      expect(() => parseTargetHost(input))
        .to.throw()
        .that.satisfies(
          (e: { reason: string; message: string }) => e.reason === 'INVALID_DOMAIN' && why.test(e.message),
        );
    });
  }
});
