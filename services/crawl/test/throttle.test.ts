import { expect } from 'chai';
import { HostNotAnsweringError, HostThrottle, type Release, type ThrottleOptions } from '../src/checking/throttle.js';

const options = (over: Partial<ThrottleOptions> = {}): ThrottleOptions => ({
  globalLimit: 100,
  initialPerHost: 2,
  maxPerHost: 8,
  slowMs: 1000,
  timeoutsToGiveUp: 3,
  downForMs: 60_000,
  ...over,
});

/** Starts n acquisitions and reports which were granted once the event loop settles. */
async function attempt(throttle: HostThrottle, host: string, n: number, signal?: AbortSignal) {
  const granted: Release[] = [];
  const pending = Array.from({ length: n }, () =>
    throttle.acquire(host, signal).then((release) => void granted.push(release)),
  );
  await new Promise((resolve) => setImmediate(resolve));
  return { granted, pending };
}

describe('host throttle', () => {
  it('holds a host to its limit and lets a waiter in when a slot frees', async () => {
    const throttle = new HostThrottle(options());
    const { granted } = await attempt(throttle, 'a.test', 5);
    expect(granted).to.have.length(2);
    granted[0]?.('neutral');
    await new Promise((resolve) => setImmediate(resolve));
    expect(granted).to.have.length(3);
  });

  it('bounds all hosts together by the global limit', async () => {
    const throttle = new HostThrottle(options({ globalLimit: 3 }));
    const a = await attempt(throttle, 'a.test', 2);
    const b = await attempt(throttle, 'b.test', 2);
    expect(a.granted.length + b.granted.length).to.equal(3);
  });

  it('grows a busy host that answers fast (slow start), up to the maximum', async () => {
    const throttle = new HostThrottle(options());
    // Twenty requests queued at once: each answer frees a slot for the next, and grows the limit.
    const done = Array.from({ length: 20 }, () =>
      throttle.acquire('fast.test').then((release) => setImmediate(() => release('fast'))),
    );
    await Promise.all(done);
    await new Promise((resolve) => setImmediate(resolve));
    expect(throttle.limitOf('fast.test')).to.equal(8);
    expect(throttle.statsOf('fast.test')?.peakActive).to.be.within(3, 8);
  });

  it('halves a host on 429/503 or a time-out, and grows it only slowly afterwards', async () => {
    const throttle = new HostThrottle(options({ initialPerHost: 8 }));
    (await throttle.acquire('busy.test'))('overloaded');
    expect(throttle.limitOf('busy.test')).to.equal(4);
    (await throttle.acquire('busy.test'))('timeout');
    expect(throttle.limitOf('busy.test')).to.equal(2);
    (await throttle.acquire('busy.test'))('fast');
    expect(throttle.limitOf('busy.test')).to.equal(2); // congestion avoidance: one step per window
    (await throttle.acquire('busy.test'))('fast');
    expect(throttle.limitOf('busy.test')).to.equal(3);
  });

  it('lowers a slow host, to one at most', async () => {
    const throttle = new HostThrottle(options({ initialPerHost: 8 }));
    (await throttle.acquire('slow.test'))('slow');
    expect(throttle.limitOf('slow.test')).to.equal(6);
    for (let i = 0; i < 10; i++) (await throttle.acquire('slow.test'))('slow');
    expect(throttle.limitOf('slow.test')).to.equal(1);
  });

  it('pauses a host for the Retry-After its release reports', async () => {
    const throttle = new HostThrottle(options());
    (await throttle.acquire('r.test'))('overloaded', 150);
    const { granted, pending } = await attempt(throttle, 'r.test', 1);
    expect(granted).to.have.length(0);
    await Promise.all(pending);
    expect(granted).to.have.length(1);
  });

  it('holds every request to a paused host back until the pause ends', async () => {
    const throttle = new HostThrottle(options());
    throttle.pause('p.test', 150);
    const { granted, pending } = await attempt(throttle, 'p.test', 1);
    expect(granted).to.have.length(0);
    await Promise.all(pending);
    expect(granted).to.have.length(1);
  });

  it('gives up on a host after time-outs in a row: waiters and newcomers are refused at once', async () => {
    const throttle = new HostThrottle(options({ initialPerHost: 3 }));
    const { granted, pending } = await attempt(throttle, 'dead.test', 4);
    const refusals = pending.map((p) =>
      p.then(
        () => undefined,
        (err: unknown) => err,
      ),
    );
    for (const release of granted) release('timeout');
    const waiter = await refusals[3];
    expect(waiter).to.be.instanceOf(HostNotAnsweringError);
    const late = await throttle.acquire('dead.test').then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(late).to.be.instanceOf(HostNotAnsweringError);
  });

  it('drops a waiter whose signal aborts', async () => {
    const throttle = new HostThrottle(options({ initialPerHost: 1 }));
    const first = await throttle.acquire('x.test');
    const controller = new AbortController();
    const waiting = throttle.acquire('x.test', controller.signal);
    controller.abort(new Error('stop'));
    const err = await waiting.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((err as Error).message).to.equal('stop');
    first('fast');
    const next = await throttle.acquire('x.test');
    next('fast');
  });
});
