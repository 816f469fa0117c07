import { MerchantsRepository } from '@app/persistence';
import { CliError } from '../output';

/**
 * The internal id (UUID) of the merchant a `--merchant` option names: its public id (what
 * merchant:create prints) or, for merchants created before public ids, its UUID. An unknown or
 * malformed id is a CliError naming the option.
 */
export async function merchantOption(merchants: MerchantsRepository, given: string | undefined, option = '--merchant'): Promise<string> {
  if (!given) throw new CliError(`${option} is required`);
  const id = await merchants.resolve(given);
  if (!id)
    throw new CliError(
      `${option}: no merchant ${JSON.stringify(given)} (give its merchantId as merchant:create printed it, 10 digits, or its UUID)`,
    );
  return id;
}

/** The public id to print for an internal id (the internal id itself if the merchant is gone, which a foreign key prevents). */
export async function publicIdFor(merchants: MerchantsRepository, id: string): Promise<string> {
  return (await merchants.publicIdOf(id)) ?? id;
}
