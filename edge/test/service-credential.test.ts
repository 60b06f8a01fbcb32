import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { expect } from 'chai';
import Koa from 'koa';
import { credentialOf } from '../src/caller.js';

/**
 * Credential.service lets a service of the deployment charge an account for its unattended work
 * (a monitor's run, decision 0461). The edge builds every credential from the request's own
 * Authorization, cookies and CSRF header, so no HTTP input can name an account to charge.
 */
describe('the edge never sends a service credential', () => {
  const contextOf = (headers: Record<string, string>) => {
    const req = new IncomingMessage(new Socket());
    req.headers = headers;
    const ctx = new Koa().createContext(req, new ServerResponse(req));
    ctx.state.clientIp = '203.0.113.7';
    return ctx;
  };

  it('reads only the key, the session and clearance cookies and the CSRF header, whatever else is sent', () => {
    const credential = credentialOf(
      contextOf({
        authorization: 'Bearer wu_live_abc',
        cookie: 'wu_session=s1; wu_clearance=c1; service=account:victim; wu_service=monitor',
        'x-csrf-token': 't1',
        'x-service': 'monitor',
        'x-webutil-service': 'account:victim',
        'x-service-subject': 'account:victim',
        service: '{"subject":"account:victim","service":"monitor"}',
      }),
    );
    expect(credential).to.deep.equal({
      clientIp: '203.0.113.7',
      apiKey: 'wu_live_abc',
      sessionToken: 's1',
      clearance: 'c1',
      csrfToken: 't1',
    });
    expect(credential).to.not.have.property('service');
  });
});
