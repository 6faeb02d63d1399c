#!/usr/bin/env node
// `node dist/scripts/bench/secret-opening.js`: what opening a delivery's sealed signing secret
// costs the worker, alone: AES-256-GCM every time (createSecretBox), and through the worker's
// memory of what it opened (rememberOpened, as src/service.ts makes it), which steady deliveries
// go through. No database, no HTTP: the full bench cannot resolve a change this size on two
// cores. Each open gets sealed bytes of its own, as each claim's row brings them. See
// docs/performance.md.
//
//   BENCH_OPENS=200000    opens per round
//   BENCH_WEBHOOKS=5005   the webhooks the opens go round, in turn (the largest write's)
//   BENCH_ROUNDS=5        rounds of each way, alternating
import { createSecretBox, newSecretKeys, rememberOpened, type SealedSecret, type SecretBox } from '../../src/secret-keys';
import { parseSecretKeys } from '../../src/config';
import { newId } from '../../src/ids';
import { newSigningSecret } from '../../src/secrets';

const OPENS = Number(process.env.BENCH_OPENS ?? 200_000);
const WEBHOOKS = Number(process.env.BENCH_WEBHOOKS ?? 5005);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
/** What src/service.ts gives rememberOpened. */
const KEPT_OPEN = 10_000;

const box = createSecretBox(parseSecretKeys(newSecretKeys('bench')));
const webhooks = Array.from({ length: WEBHOOKS }, () => {
  const id = newId('wh');
  return { id, sealed: box.seal(newSigningSecret(), id) };
});

/** CPU-µs per open of `OPENS` opens through `opener`, the webhooks in turn. */
function round(opener: SecretBox): number {
  const cpu = process.cpuUsage();
  let length = 0;
  for (let i = 0; i < OPENS; i++) {
    const { id, sealed } = webhooks[i % WEBHOOKS];
    const row: SealedSecret = { keyId: sealed.keyId, sealed: Buffer.from(sealed.sealed) };
    length += opener.open(row, id).length;
  }
  const used = process.cpuUsage(cpu);
  if (length !== OPENS * 49) throw new Error('an open gave something else than a secret');
  return (used.user + used.system) / OPENS;
}

/** The bytes a row brings, copied: what every way pays besides its opening. */
const copyOnly: SecretBox = { ...box, keyId: box.keyId, open: () => 'x'.repeat(49) };

const ways: Record<string, () => SecretBox> = {
  'the copy of the row alone': () => copyOnly,
  'opened each time': () => box,
  'remembered (rememberOpened)': () => rememberOpened(box, KEPT_OPEN),
};
const results: Record<string, number[]> = {};
for (const make of Object.values(ways)) round(make()); // warm-up
for (let i = 0; i < ROUNDS; i++) {
  for (const [name, make] of Object.entries(ways)) {
    // Each round a fresh memory: its first pass over the webhooks opens each one.
    (results[name] ??= []).push(round(make()));
  }
}
console.log(`\n${OPENS} opens per round over ${WEBHOOKS} webhooks; CPU-µs per open, each round:\n`);
console.log('| | each round | median |');
console.log('|---|---|---|');
for (const [name, runs] of Object.entries(results)) {
  const median = [...runs].sort((a, b) => a - b)[Math.floor(runs.length / 2)];
  console.log(`| ${name} | ${runs.map((run) => run.toFixed(3)).join(', ')} | ${median.toFixed(3)} |`);
}
