import { setTimeout as sleep } from 'node:timers/promises';

/**
 * fetch that meets a 429 by waiting the answer's Retry-After once, saying so on `say`, and
 * trying again; a second 429 is the answer.
 */
export function rateLimitedFetch(say: (line: string) => void): typeof globalThis.fetch {
  return async (input, init) => {
    const request = new Request(input, init);
    const again = request.clone();
    const response = await fetch(request);
    if (response.status !== 429) return response;
    const seconds = Math.max(1, Number(response.headers.get('retry-after')) || 1);
    say(`Rate limited: waiting ${seconds} s (Retry-After) and trying once more.`);
    await sleep(seconds * 1000);
    return fetch(again);
  };
}
