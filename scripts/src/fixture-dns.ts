/**
 * Fixture DNS server for tests: UDP on 127.0.0.1 (random port), answering A, AAAA and CAA queries
 * from tables the test sets, with TTL 0, and NXDOMAIN for any other name. A name's answer may be a
 * function of how many times it was asked, to play DNS rebinding (a first answer, then another).
 * Services that take a DNS server setting (the render proxy's RENDER_DNS_SERVERS) are pointed at it.
 */
import dgram from 'node:dgram';
import net from 'node:net';
import dnsPacket from 'dns-packet';

/** The addresses for a name; `asked` counts earlier A queries for it (0 on the first). */
export type DnsAnswer = string[] | ((asked: number) => string[]);

export interface FixtureDns {
  /** host:port, as a resolver setting takes it. */
  server: string;
  /** Sets (or replaces) the answer for a name, sent `delayMs` after the query (a slow resolver). */
  set(name: string, answer: DnsAnswer, options?: { delayMs?: number }): void;
  /** Sets (or replaces) the CAA records of a name. */
  setCaa(name: string, records: CaaRecord[]): void;
  /** Queries seen, oldest first: `A example.test`. */
  queries: string[];
  close(): Promise<void>;
}

export interface CaaRecord {
  critical?: boolean;
  tag: 'issue' | 'issuewild' | 'iodef';
  value: string;
}

export async function startFixtureDns(): Promise<FixtureDns> {
  const socket = dgram.createSocket('udp4');
  const answers = new Map<string, DnsAnswer>();
  const caa = new Map<string, CaaRecord[]>();
  const delays = new Map<string, number>();
  /** Answers still to be sent: dropped on close. */
  const delayed = new Set<NodeJS.Timeout>();
  const asked = new Map<string, number>();
  const queries: string[] = [];
  socket.on('message', (message, peer) => {
    let query: dnsPacket.Packet;
    try {
      query = dnsPacket.decode(message);
    } catch {
      return;
    }
    const question = query.questions?.[0];
    if (!question) return;
    const name = question.name.toLowerCase();
    queries.push(`${question.type} ${name}`);
    const answer = answers.get(name);
    let addresses: string[] = [];
    if (answer) {
      const count = asked.get(name) ?? 0;
      if (question.type === 'A') asked.set(name, count + 1);
      addresses = typeof answer === 'function' ? answer(count) : answer;
    }
    const family = question.type === 'A' ? 4 : question.type === 'AAAA' ? 6 : 0;
    const records: dnsPacket.Answer[] = addresses
      .filter((address) => net.isIP(address) === family)
      .map((data) => ({
        type: question.type as 'A' | 'AAAA',
        name: question.name,
        ttl: 0,
        class: 'IN' as const,
        data,
      }));
    const caaRecords = caa.get(name);
    if (question.type === 'CAA') {
      for (const record of caaRecords ?? []) {
        const critical = record.critical ?? false;
        const data = { flags: critical ? 128 : 0, tag: record.tag, value: record.value, issuerCritical: critical };
        records.push({ type: 'CAA', name: question.name, ttl: 0, class: 'IN', data });
      }
    }
    const reply = dnsPacket.encode({
      type: 'response',
      id: query.id,
      // rcode 3: NXDOMAIN
      flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | (answer || caaRecords ? 0 : 3),
      questions: query.questions,
      answers: records,
    });
    const send = () => socket.send(reply, peer.port, peer.address);
    const delayMs = delays.get(name);
    if (!delayMs) return send();
    const timer = setTimeout(() => {
      delayed.delete(timer);
      send();
    }, delayMs);
    delayed.add(timer);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const { port } = socket.address();
  return {
    server: `127.0.0.1:${port}`,
    set: (name, answer, options) => {
      answers.set(name.toLowerCase(), answer);
      asked.delete(name.toLowerCase());
      if (options?.delayMs) delays.set(name.toLowerCase(), options.delayMs);
      else delays.delete(name.toLowerCase());
    },
    setCaa: (name, records) => {
      caa.set(name.toLowerCase(), records);
    },
    queries,
    close: () => {
      for (const timer of delayed) clearTimeout(timer);
      return new Promise<void>((resolve) => socket.close(() => resolve()));
    },
  };
}
