import { expect } from 'chai';
import { readConfig } from '../src/config.js';

describe('crawl settings', () => {
  it('runs 32 page workers a replica on the embedded store, 16 on MongoDB, unless set', () => {
    expect(readConfig({}).SITE_AUDIT_PAGE_WORKERS).to.equal(32);
    expect(readConfig({ MONGO_URL: 'mongodb://127.0.0.1:27017/webutil' }).SITE_AUDIT_PAGE_WORKERS).to.equal(16);
    expect(readConfig({ SITE_AUDIT_PAGE_WORKERS: '8' }).SITE_AUDIT_PAGE_WORKERS).to.equal(8);
    expect(
      readConfig({ MONGO_URL: 'mongodb://127.0.0.1:27017/webutil', SITE_AUDIT_PAGE_WORKERS: '24' })
        .SITE_AUDIT_PAGE_WORKERS,
    ).to.equal(24);
  });
});
