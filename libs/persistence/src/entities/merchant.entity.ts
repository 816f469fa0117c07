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

  /** Needed in the clear to sign callbacks (Standard Webhooks HMAC); never logged. */
  @Column('text', { name: 'webhook_secret' })
  webhookSecret: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column('timestamptz', { name: 'key_rotated_at', nullable: true })
  keyRotatedAt: Date | null;
}
