import os from 'node:os';
import { expect } from 'chai';
import { readConfig } from '../src/config.js';

describe('crawl settings', () => {
  it('runs 32 page workers a replica on the embedded store (64 with a read thread), 16 on MongoDB, unless set', () => {
    expect(readConfig({ SITE_AUDIT_READ_THREADS: '0' }).SITE_AUDIT_PAGE_WORKERS).to.equal(32);
    expect(readConfig({ SITE_AUDIT_READ_THREADS: '1' }).SITE_AUDIT_PAGE_WORKERS).to.equal(64);
    expect(readConfig({ MONGO_URL: 'mongodb://127.0.0.1:27017/webutil' }).SITE_AUDIT_PAGE_WORKERS).to.equal(16);
    expect(readConfig({ SITE_AUDIT_PAGE_WORKERS: '8' }).SITE_AUDIT_PAGE_WORKERS).to.equal(8);
    expect(
      readConfig({ MONGO_URL: 'mongodb://127.0.0.1:27017/webutil', SITE_AUDIT_PAGE_WORKERS: '24' })
        .SITE_AUDIT_PAGE_WORKERS,
    ).to.equal(24);
  });

  it('parses audit pages on one thread where the process may use more than one core, unless set', () => {
    expect(readConfig({}).SITE_AUDIT_READ_THREADS).to.equal(os.availableParallelism() > 1 ? 1 : 0);
    expect(readConfig({ SITE_AUDIT_READ_THREADS: '0' }).SITE_AUDIT_READ_THREADS).to.equal(0);
    expect(readConfig({ SITE_AUDIT_READ_THREADS: '3' }).SITE_AUDIT_READ_THREADS).to.equal(3);
  });
});
