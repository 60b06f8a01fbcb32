import type { SpentCall } from '@webutil/proto/webutil/billing/v1/billing';
import { expect } from 'chai';
import { CreditLeases } from '../src/credit-leases.js';

interface Settled {
  reservationId: string;
  spent: SpentCall[];
  refundOf?: string;
}

describe('credit leases (a busy caller’s calls paid from one hold)', () => {
  let settled: Settled[];
  let returned: Array<[string, number]>;
  let leases: CreditLeases;

  beforeEach(() => {
    settled = [];
    returned = [];
    leases = new CreditLeases(
      60_000,
      {
        add: (reservationId, spent, _expiresAt, refundOf) =>
          settled.push({ reservationId, spent, ...(refundOf ? { refundOf } : {}) }),
      },
      (key, credits) => returned.push([key, credits]),
    );
  });
  afterEach(() => leases.closeAll());

  /** Paid calls that went to billing: the lease size asked for on each. */
  const sizes = (key: string, calls: number, remaining: number | undefined) =>
    Array.from({ length: calls }, () => leases.sizeFor(key, 1, remaining));

  it('asks for a lease only once a caller is busy and has plenty left', () => {
    expect(sizes('key:busy', 10, 100_000)).to.deep.equal([0, 0, 0, 0, 0, 0, 0, 0, 100, 100]);
    // A twentieth of what is left, and not below 16: a small balance has each call held on its own.
    expect(sizes('key:some', 9, 1_000).at(-1)).to.equal(50);
    expect(sizes('key:little', 9, 300).at(-1)).to.equal(0);
    expect(sizes('key:unknown', 9, undefined).at(-1)).to.equal(0);
  });

  it('pays calls from the lease, gives failed calls’ credits back to it, and settles what was spent', () => {
    const first = leases.open('key:k', 'r1', 20, 'down-check', 1);
    expect(leases.unused('key:k')).to.equal(19);
    const second = leases.take('key:k', 'meta-scan', 2);
    const third = leases.take('key:k', 'down-check', 1);
    expect(leases.unused('key:k')).to.equal(16);
    first.settle('success');
    second?.settle('failure');
    expect(leases.unused('key:k'), 'a failure’s credits are the lease’s again').to.equal(18);
    leases.close('key:k');
    expect(leases.take('key:k', 'down-check', 1), 'an ended lease pays nothing more').to.equal(undefined);
    expect(settled, 'not while a call is in flight').to.deep.equal([]);
    expect(leases.unused('key:k'), 'still held at billing, still the caller’s').to.equal(18);
    third?.settle('success');
    expect(settled).to.deep.equal([
      {
        reservationId: 'r1',
        spent: [
          { operation: 'down-check', credits: 1 },
          { operation: 'down-check', credits: 1 },
        ],
        refundOf: 'key:k',
      },
    ]);
    expect(returned).to.deep.equal([['key:k', 18]]);
    expect(leases.unused('key:k')).to.equal(0);
  });

  it('refuses a call the lease cannot pay whole, and a settled call settles once', () => {
    const call = leases.open('key:k', 'r1', 3, 'down-check', 2);
    expect(leases.take('key:k', 'meta-scan', 2)).to.equal(undefined);
    call.settle('success');
    call.settle('failure');
    call.giveBack();
    expect(leases.unused('key:k')).to.equal(1);
    leases.close('key:k');
    expect(settled).to.deep.equal([
      { reservationId: 'r1', spent: [{ operation: 'down-check', credits: 2 }], refundOf: 'key:k' },
    ]);
  });

  it('a newer lease replaces the open one, which settles on its own; a fully spent one returns nothing', () => {
    leases.open('key:k', 'r1', 1, 'down-check', 1).settle('success');
    leases.open('key:k', 'r2', 16, 'down-check', 1).settle('success');
    expect(settled).to.deep.equal([{ reservationId: 'r1', spent: [{ operation: 'down-check', credits: 1 }] }]);
    expect(leases.take('key:k', 'down-check', 1)).to.not.equal(undefined);
    expect(leases.unused('key:k')).to.equal(14);
  });

  it('ends a lease when its time is up', async () => {
    const short = new CreditLeases(
      50,
      { add: (reservationId, spent) => settled.push({ reservationId, spent }) },
      () => undefined,
    );
    short.open('key:k', 'r1', 16, 'down-check', 1).settle('success');
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect(short.take('key:k', 'down-check', 1)).to.equal(undefined);
    expect(settled.map((s) => s.reservationId)).to.deep.equal(['r1']);
    short.closeAll();
  });

  it('counts the unused credits of an ended lease still waiting for a call, until it settles', () => {
    const slow = leases.open('key:k', 'r1', 20, 'down-check', 1);
    leases.open('key:k', 'r2', 16, 'down-check', 1).settle('success');
    expect(leases.unused('key:k'), '19 held by the ended lease, 15 by the open one').to.equal(34);
    slow.settle('success');
    expect(returned).to.deep.equal([['key:k', 19]]);
    expect(leases.unused('key:k')).to.equal(15);
  });
});
