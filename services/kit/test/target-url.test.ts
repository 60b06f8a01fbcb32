import { status } from '@grpc/grpc-js';
import { expect } from 'chai';
import { ServiceError } from '../src/errors.js';
import { parseTargetUrl } from '../src/target-url.js';

function rejection(input: string): ServiceError {
  try {
    parseTargetUrl(input);
  } catch (err) {
    expect(err).to.be.instanceOf(ServiceError);
    return err as ServiceError;
  }
  expect.fail(`parseTargetUrl(${JSON.stringify(input)}) should have thrown`);
}

describe('parseTargetUrl', () => {
  describe('a URL without a scheme means https', () => {
    const cases: [string, string][] = [
      ['example.com', 'https://example.com/'],
      ['example.com/path?q=1#frag', 'https://example.com/path?q=1#frag'],
      ['localhost:3000', 'https://localhost:3000/'],
      ['localhost:3000/x', 'https://localhost:3000/x'],
      ['//example.com', 'https://example.com/'],
      ['//example.com/a/b', 'https://example.com/a/b'],
      ['  example.com  ', 'https://example.com/'],
      ['Example.COM', 'https://example.com/'],
    ];
    for (const [input, expected] of cases) {
      it(`${JSON.stringify(input)} -> ${expected}`, () => expect(parseTargetUrl(input).href).to.equal(expected));
    }
  });

  describe('http and https are accepted as given', () => {
    for (const input of [
      'http://example.com/',
      'https://example.com/a?b=c',
      'HTTP://example.com:8080/',
      'https://[2606:4700:4700::1111]/',
    ]) {
      it(input, () => {
        const url = parseTargetUrl(input);
        expect(url.protocol).to.be.oneOf(['http:', 'https:']);
        expect(url.href.toLowerCase()).to.equal(new URL(input).href.toLowerCase());
      });
    }
    it('keeps http as http', () => expect(parseTargetUrl('http://example.com').protocol).to.equal('http:'));
  });

  describe('other schemes are rejected as INVALID_URL', () => {
    for (const input of [
      'javascript:alert(1)',
      'JavaScript:alert(1)',
      'file:///etc/passwd',
      'data:text/html,<script>alert(1)</script>',
      'ftp://example.com/file',
      'mailto:someone@example.com',
      'ws://example.com/',
      'gopher://example.com/',
    ]) {
      it(input, () => {
        const err = rejection(input);
        expect(err.reason).to.equal('INVALID_URL');
        expect(err.code).to.equal(status.INVALID_ARGUMENT);
      });
    }
  });

  describe('empty and garbage input is rejected as INVALID_URL', () => {
    for (const input of [
      '',
      '   ',
      'http://',
      'https://',
      'http:// example.com',
      'http://exa mple.com/',
      '://',
      'http://[::1',
      'http://%zz/',
    ]) {
      it(JSON.stringify(input), () => expect(rejection(input).reason).to.equal('INVALID_URL'));
    }
  });

  describe('a host that is neither a DNS name nor an IP literal is rejected as INVALID_URL', () => {
    for (const input of [
      'ht!tp://%%%',
      'https://exa!mple.com/',
      'http://*.example.com/',
      'http://-example.com/',
      'http://example-.com/',
      'http://a..b/',
      `http://${'a'.repeat(64)}.com/`,
      `http://${'a.'.repeat(127)}com/`,
      'http://%2A%2A/',
      'http://exa"mple.com/',
    ]) {
      it(JSON.stringify(input), () => expect(rejection(input).message).to.match(/not a valid (host name|URL)/));
    }
  });

  describe('real host names pass', () => {
    for (const input of [
      'https://example.com./',
      'http://my_host.example/',
      'https://xn--bcher-kva.example/',
      'https://bücher.example/',
      'http://a-b.c-d.example:8080/',
      'http://10.0.0.1/',
      `http://${'a'.repeat(63)}.com/`,
    ]) {
      it(input, () => expect(parseTargetUrl(input).protocol).to.match(/^https?:$/));
    }
  });

  describe('credentials are rejected', () => {
    for (const input of [
      'https://user:pass@example.com/',
      'http://user@example.com/',
      'user:pass@example.com',
      'https://:secret@example.com/',
    ]) {
      it(input, () => {
        const err = rejection(input);
        expect(err.reason).to.equal('INVALID_URL');
        expect(err.message).to.not.include('pass');
      });
    }
  });

  describe('hosts are canonicalised by the WHATWG parser', () => {
    const cases: [string, string][] = [
      ['http://0x7f000001/', '127.0.0.1'],
      ['http://2130706433/', '127.0.0.1'],
      ['http://0177.0.0.1/', '127.0.0.1'],
      ['http://127.1/', '127.0.0.1'],
      ['http://[::ffff:127.0.0.1]/', '[::ffff:7f00:1]'],
      ['http://[0:0:0:0:0:0:0:1]/', '[::1]'],
    ];
    for (const [input, host] of cases) {
      it(`${input} -> ${host}`, () => expect(parseTargetUrl(input).hostname).to.equal(host));
    }
  });

  it('does not echo a huge input back in full', () => {
    const err = rejection(`http://exa mple.com/${'a'.repeat(5000)}`);
    expect(err.message.length).to.be.lessThan(400);
  });
});
