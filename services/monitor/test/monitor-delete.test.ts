import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DiskArtifactStore } from '@webutil/kit/artifacts';
import { expect } from 'chai';
import { Monitors } from '../src/monitors.js';
import { imagesOfRun } from '../src/run-images.js';
import { SqliteMonitorStore } from '../src/store/store-sqlite.js';

const owner = { subject: 'account:a1', plan: 'ENTERPRISE', sandbox: false };

describe('deleting a monitor deletes its runs, incidents, days and stored images', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'monitor-delete-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('names a run’s capture and diff image, and nothing that is not an image name', () => {
    const image = 'A'.repeat(32).concat('.png');
    const diff = 'B'.repeat(32).concat('.png');
    expect(
      imagesOfRun({ resultJson: JSON.stringify({ image }), changesJson: JSON.stringify({ diffImage: diff }) }),
    ).to.deep.equal([image, diff]);
    expect(imagesOfRun({ resultJson: JSON.stringify({ image: '../etc/passwd' }) })).to.deep.equal([]);
    expect(imagesOfRun({})).to.deep.equal([]);
  });

  it('a screenshot monitor’s images go with it (600 runs, over a page); another monitor’s stay', async () => {
    const store = new SqliteMonitorStore(path.join(dir, 'monitors.sqlite'));
    const images = await DiskArtifactStore.open(path.join(dir, 'images'));
    const monitors = new Monitors({ store, images });
    const make = () =>
      monitors.create({
        owner,
        name: 'shot',
        kind: 'screenshot',
        inputJson: '{"url":"https://a.test/"}',
        requestJson: '{}',
        intervalSeconds: 3_600,
      });
    const [gone, kept] = [await make(), await make()];
    const put = async () =>
      (await images.put({ body: Buffer.from('png'), extension: 'png', contentType: 'image/png', ttlMs: 86_400_000 }))
        .name;
    const names: Record<string, string[]> = { [gone.id]: [], [kept.id]: [] };
    for (const m of [gone, kept]) {
      for (let k = 1; k <= (m === gone ? 600 : 2); k++) {
        const [image, diffImage] = [await put(), await put()];
        names[m.id]?.push(image, diffImage);
        const slot = k * 3_600_000;
        await store.claimRun({
          id: `${m.id}@${slot}`,
          monitorId: m.id,
          slot,
          startedAt: slot,
          late: false,
          outcome: 'running',
          reason: '',
          creditsSpent: 0,
          replica: 'r',
        });
        await store.finishRun(`${m.id}@${slot}`, {
          outcome: 'ok',
          reason: '',
          creditsSpent: 2,
          resultJson: JSON.stringify({ image }),
          changesJson: JSON.stringify({ diffImage }),
        });
      }
    }
    await store.openIncident({
      id: 'inc_1',
      monitorId: gone.id,
      state: 'open',
      openedAt: 1,
      reason: 'x',
      silenced: false,
    });
    await monitors.delete(owner, gone.id);
    for (const name of names[gone.id] ?? []) expect(await images.stat(name), name).to.equal(undefined);
    for (const name of names[kept.id] ?? []) expect(await images.stat(name), name).to.not.equal(undefined);
    expect(await store.listRuns(gone.id, { limit: 10 })).to.deep.equal([]);
    expect(await store.listIncidents(gone.id, 10)).to.deep.equal([]);
    // Another account's id deletes nothing.
    let error: unknown;
    await monitors.delete({ subject: 'account:other', plan: 'FREE', sandbox: false }, kept.id).catch((err: unknown) => {
      error = err;
    });
    expect(String(error)).to.match(/MONITOR_NOT_FOUND|no monitor/);
    expect(await images.stat(names[kept.id]?.[0] ?? '')).to.not.equal(undefined);
    await store.close();
    await images.close();
  });
});
