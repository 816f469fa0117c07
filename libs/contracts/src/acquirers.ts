/**
 * Which connector serves a sale: a test merchant's sales all go to the built-in sandbox, whatever
 * `payment.acquirer` says; a production merchant's go to the acquirer the code names, through the
 * merchant's own account there. Codes are the API family's (26 Cielo API 3.0, 27 e.Rede).
 */
export type MerchantEnvironment = 'test' | 'production';
export const MERCHANT_ENVIRONMENTS: readonly MerchantEnvironment[] = ['test', 'production'];

export type ConnectorName = 'sandbox' | 'cielo' | 'erede';

/** The acquirer codes a production merchant can use, and the connector of each. */
export const ACQUIRER_CONNECTORS: Readonly<Record<number, Exclude<ConnectorName, 'sandbox'>>> = { 26: 'cielo', 27: 'erede' };

/** What the console and the CLI call each code. */
export const ACQUIRER_NAMES: Readonly<Record<number, string>> = { 26: 'Cielo API 3.0', 27: 'e.Rede' };

export type ConnectorChoice = { connector: ConnectorName } | { refused: string };

/** The connector of a sale, or why it cannot be served (the wire error's message; nothing is recorded). */
export function connectorFor(environment: MerchantEnvironment, code: number, accounts: readonly number[]): ConnectorChoice {
  if (environment === 'test') return { connector: 'sandbox' };
  const connector = ACQUIRER_CONNECTORS[code];
  if (!connector) {
    const known = Object.entries(ACQUIRER_NAMES).map(([c, n]) => `${c} (${n})`);
    return { refused: `payment.acquirer ${code} has no connector in this gateway; a production merchant can use ${known.join(' or ')}.` };
  }
  if (!accounts.includes(code)) {
    return { refused: `payment.acquirer ${code} (${ACQUIRER_NAMES[code]}): this merchant has no account set at that acquirer.` };
  }
  return { connector };
}
