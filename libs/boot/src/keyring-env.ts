import { type BaseConfig, type EnvReader, readKeyVariable } from '@app/platform';
import { Keyring, parseKeyring } from '@app/vault/keyring';

/** A keyring variable (`kid:base64,...[;active=kid]`), read as readKeyVariable does; problems are recorded on `r`. */
export function readKeyring(r: EnvReader, base: BaseConfig, name: string): Keyring {
  const spec = readKeyVariable(r, base, name);
  return (spec && r.parse(name, () => parseKeyring(spec, name))) as Keyring;
}
