import { readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { AddressPolicy, createLogger } from '@webutil/kit';
import { expect } from 'chai';
import { BrowserPool, chromiumSandbox } from '../src/browser-pool.js';
import { EgressProxy } from '../src/egress-proxy.js';

/** The renderer processes under a browser process (Chromium rewrites their command lines with spaces). */
function renderersUnder(root: number): string[] {
  const children = new Map<number, number[]>();
  const commands = new Map<number, string>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
      commands.set(Number(entry), readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' '));
    } catch {
      // the process ended meanwhile
    }
  }
  const found: string[] = [];
  const visit = (pid: number) => {
    const command = commands.get(pid) ?? '';
    if (command.includes('--type=renderer')) found.push(command.includes('--top-chrome-webui') ? 'browser UI' : 'page');
    for (const child of children.get(pid) ?? []) visit(child);
  };
  visit(root);
  return found;
}

describe('browser pool (real Chromium)', function () {
  this.timeout(60_000);
  let pool: BrowserPool;
  let site: http.Server;

  before(async () => {
    site = http.createServer((_req, res) => res.end('<!doctype html><h1>one page</h1>'));
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    pool = await BrowserPool.start({
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      sandbox: chromiumSandbox('auto'),
      browsers: 1,
      pagesPerBrowser: 1,
      queueDepth: 0,
      log: createLogger('render-test', 'silent'),
    });
  });
  after(async () => {
    await pool?.close();
    site?.close();
  });

  it("starts one renderer for a render's page: no spare renderer, no omnibox pop-up WebUI", async () => {
    const lease = await pool.acquire(new AbortController().signal, Date.now() + 10_000);
    const proxy = await EgressProxy.open({
      policy: new AddressPolicy(['127.0.0.1/32']),
      lookup: undefined,
      connectTimeoutMs: 5_000,
    });
    const context = await lease.browser.createBrowserContext({
      proxyServer: proxy.url,
      proxyBypassList: ['<-loopback>'],
    });
    try {
      const page = await context.newPage();
      await page.goto(`http://127.0.0.1:${(site.address() as AddressInfo).port}/`);
      expect(await page.$eval('h1', (h) => h.textContent)).to.equal('one page');
      // Each unused one costs a renderer's start-up, most of a simple render's CPU (decision 0193).
      expect(renderersUnder(lease.browser.process()?.pid ?? 0)).to.deep.equal(['page']);
      const session = await lease.browser.target().createCDPSession();
      const { targetInfos } = await session.send('Target.getTargets', { filter: [{}] });
      await session.detach();
      expect(targetInfos.filter((t) => t.type === 'browser_ui').map((t) => t.url)).to.deep.equal([]);
    } finally {
      await context.close();
      await proxy.close();
      lease.release();
    }
  });
});
