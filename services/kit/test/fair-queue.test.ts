import { expect } from 'chai';
import { FairQueue } from '../src/fair-queue.js';

const flood = { subject: 'account:flood', weight: 16 };
const small = { subject: 'account:small', weight: 2 };
const other = { subject: 'ip:192.0.2.7', weight: 2 };

describe('FairQueue (max-min fair hand-out and per-caller queue shares)', () => {
  it('hands a freed slot to the waiting caller holding the fewest slots for its weight, not the earliest', () => {
    const queue = new FairQueue<string>(16);
    for (let i = 0; i < 4; i++) queue.hold(flood.subject);
    for (let i = 0; i < 6; i++) queue.push(flood, `flood-${i}`);
    queue.push(small, 'small-0');
    queue.push(small, 'small-1');
    // flood holds 4 of weight 16 (0.25), small none: small goes first, in its own order.
    const first = queue.next();
    expect(first?.item).to.equal('small-0');
    queue.hold(small.subject);
    // small now holds 1 of weight 2 (0.5) against flood's 0.25: the flood's earliest is next.
    expect(queue.next()?.item).to.equal('flood-0');
    expect(queue.length).to.equal(6);
  });

  it('breaks ties by arrival, and forgets a caller once it holds nothing', () => {
    const queue = new FairQueue<string>(4);
    queue.push(other, 'a');
    queue.push(small, 'b');
    expect(queue.next()?.item).to.equal('a');
    const release = queue.hold(other.subject);
    expect(queue.heldBy(other.subject)).to.equal(1);
    release();
    release();
    expect(queue.heldBy(other.subject)).to.equal(0);
  });

  it('lets a caller alone fill the whole depth, but only its weighted share once others wait', () => {
    const queue = new FairQueue<string>(16);
    for (let i = 0; i < 16; i++) {
      expect(queue.admission(flood)).to.equal('admitted');
      queue.push(flood, `flood-${i}`);
    }
    // Alone it crowds nobody out: the queue is just full.
    expect(queue.admission(flood)).to.equal('full');
    // A newcomer gets in although the flood filled the depth: its share is ceil(16 * 2 / 18) = 2.
    expect(queue.admission(small)).to.equal('admitted');
    queue.push(small, 'small-0');
    expect(queue.admission(small)).to.equal('admitted');
    queue.push(small, 'small-1');
    expect(queue.admission(small)).to.equal('over-share');
    // The flood, past its share of 15 now, is refused until its waiters leave the queue.
    expect(queue.admission(flood)).to.equal('over-share');
    queue.remove('flood-0');
    expect(queue.admission(flood)).to.equal('over-share');
    queue.remove('flood-1');
    expect(queue.admission(flood)).to.equal('admitted');
  });

  it('is full past twice its depth, and a depth of 0 queues nothing', () => {
    const queue = new FairQueue<number>(2);
    for (let i = 0; i < 4; i++) queue.push({ subject: `ip:${i}`, weight: 1 }, i);
    expect(queue.admission({ subject: 'ip:new', weight: 1 })).to.equal('full');
    expect(new FairQueue<number>(0).admission(small)).to.equal('full');
  });
});
