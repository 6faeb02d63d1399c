// An injectable resolver for the service (TestStackOptions.resolve) whose answers a test
// sets, and changes, per name: a name may answer one thing to the registration check and
// another to the dial (DNS rebinding). Unknown names fail like getaddrinfo's ENOTFOUND.
import type { Resolver } from '../../../src/delivery/url-policy';

export interface TestDns {
  resolve: Resolver;
  /** Every lookup, in order. */
  readonly calls: string[];
  /** Answers `addresses` from now on. */
  set(name: string, addresses: string[]): void;
  /** Answers each of `answers` once, in order, then the last one forever. */
  sequence(name: string, answers: string[][]): void;
  callsFor(name: string): number;
}

export function createTestDns(initial: Record<string, string[]> = {}): TestDns {
  const queues = new Map<string, string[][]>(Object.entries(initial).map(([name, addresses]) => [name, [addresses]]));
  const calls: string[] = [];
  return {
    calls,
    async resolve(hostname) {
      calls.push(hostname);
      const queue = queues.get(hostname);
      if (!queue) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
      return queue.length > 1 ? queue.shift()! : queue[0];
    },
    set(name, addresses) {
      queues.set(name, [addresses]);
    },
    sequence(name, answers) {
      queues.set(
        name,
        answers.map((answer) => [...answer]),
      );
    },
    callsFor: (name) => calls.filter((call) => call === name).length,
  };
}
