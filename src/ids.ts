// The service's ids: how they are made and what they look like, in one place. Pure (the
// dashboard's types and the JSON schemas read the form too).
export type IdPrefix = 'acc' | 'wh' | 'dlv' | 'reg' | 'ntc' | 'tkn' | 'rcv' | 'aud';

const ID_BYTES = 12;

/** Random, non-sequential ids such as `wh_5f0c…` (96 bits, in hex). */
export function newId(prefix: IdPrefix): string {
  const bytes = crypto.getRandomValues(new Uint8Array(ID_BYTES));
  return `${prefix}_${Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('')}`;
}

/** The form of every id `newId(prefix)` makes, as a JSON schema pattern or a RegExp source. */
export function idPattern(prefix: IdPrefix): string {
  return `^${prefix}_[0-9a-f]{${ID_BYTES * 2}}$`;
}
