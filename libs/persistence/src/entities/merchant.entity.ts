import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

@Entity({ name: 'merchants' })
export class MerchantEntity {
  /** Internal: what every other table, job and row refers to. Never shown to a merchant once it has a public id. */
  @PrimaryColumn('uuid')
  id: string;

  /** What merchant:create prints and a merchant authenticates with (see merchants/merchant-public-id.ts). */
  @Column('text', { name: 'public_id', unique: true })
  publicId: string;

  @Column('text')
  name: string;

  /** SHA-256 of the merchant key: the key is random and high-entropy, so a fast hash is enough. */
  @Column('bytea', { name: 'key_hash' })
  keyHash: Buffer;

  /**
   * The webhook secret signs callbacks (Standard Webhooks HMAC), so it is needed in the clear by
   * the notifier, but is stored sealed under SECRETS_KEKS (merchants/webhook-secret-seal.ts), as
   * is the previous one during its grace period. Both under the key `webhookSecretsKekId`.
   */
  @Column('text', { name: 'webhook_secrets_kek_id' })
  webhookSecretsKekId: string;

  @Column('bytea', { name: 'webhook_secret_sealed' })
  webhookSecretSealed: Buffer;

  @Column('bytea', { name: 'previous_webhook_secret_sealed', nullable: true })
  previousWebhookSecretSealed: Buffer | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column('timestamptz', { name: 'key_rotated_at', nullable: true })
  keyRotatedAt: Date | null;
}
