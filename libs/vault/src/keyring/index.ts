import { randomBytes } from 'node:crypto';

const KEY_BYTES = 32;
const KID = /^[A-Za-z0-9_-]{1,32}$/;
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

export interface KeyEntry {
  kid: string;
  key: Buffer;
}

/**
 * Versioned symmetric keys. The active key protects new data; the others stay so that data
 * written under them can still be read while a rotation catches up.
 */
export class Keyring {
  readonly active: KeyEntry;
  private readonly keys: ReadonlyMap<string, Buffer>;

  constructor(entries: KeyEntry[], activeKid: string = entries[entries.length - 1]?.kid) {
    this.keys = new Map(entries.map((e) => [e.kid, e.key]));
    const key = this.keys.get(activeKid);
    if (!key || this.keys.size !== entries.length) throw new Error('a keyring needs distinct key ids and an active key among them');
    this.active = { kid: activeKid, key };
  }

  get(kid: string): Buffer | undefined {
    return this.keys.get(kid);
  }

  kids(): string[] {
    return [...this.keys.keys()];
  }

  /** The inverse of `parseKeyring`; `;active=` only when the active key is not the last one. */
  toSpec(): string {
    const entries = [...this.keys].map(([kid, key]) => `${kid}:${key.toString('base64')}`).join(',');
    const kids = this.kids();
    return kids[kids.length - 1] === this.active.kid ? entries : `${entries};active=${this.active.kid}`;
  }
}

/**
 * Reads `kid1:base64key,kid2:base64key[;active=kid]` from the variable `name`. The last entry is
 * active by default, so rotating is "append a key". Errors name the variable and the entry's
 * position but never echo the text: a misplaced separator would otherwise print a key.
 */
export function parseKeyring(spec: string, name: string): Keyring {
  const fail = (problem: string) => new Error(`${name} ${problem}`);
  const [list, option, ...extra] = spec.trim().split(';');
  if (extra.length > 0) throw fail('has more than one ";" option');
  let activeKid: string | undefined;
  if (option !== undefined) {
    const m = /^\s*active=([^\s]*)\s*$/.exec(option);
    if (!m || !KID.test(m[1])) throw fail('has a malformed ";active=<kid>" option');
    activeKid = m[1];
  }
  if (list.trim() === '') throw fail('has no keys');

  const entries: KeyEntry[] = [];
  list.split(',').forEach((raw, i) => {
    const at = `entry ${i + 1}`;
    const colon = raw.indexOf(':');
    if (colon < 0) throw fail(`${at} is not "<kid>:<base64 key>"`);
    const kid = raw.slice(0, colon).trim();
    const encoded = raw.slice(colon + 1).trim();
    if (!KID.test(kid)) throw fail(`${at} has a key id that is not 1 to 32 of A-Z a-z 0-9 _ -`);
    if (!BASE64.test(encoded)) throw fail(`key "${kid}" is not base64`);
    const key = Buffer.from(encoded, 'base64');
    if (key.length !== KEY_BYTES) throw fail(`key "${kid}" must be ${KEY_BYTES} bytes (got ${key.length})`);
    if (entries.some((e) => e.kid === kid)) throw fail(`has the key id "${kid}" twice`);
    entries.push({ kid, key });
  });
  if (activeKid !== undefined && !entries.some((e) => e.kid === activeKid))
    throw fail(`names active key "${activeKid}", which it does not hold`);
  return new Keyring(entries, activeKid);
}

/** A fresh `kid:base64key` entry, ready to append to a keyring spec. */
export function generateKeySpec(kid: string): string {
  if (!KID.test(kid)) throw new Error('a key id is 1 to 32 of A-Z a-z 0-9 _ -');
  return `${kid}:${randomBytes(KEY_BYTES).toString('base64')}`;
}
