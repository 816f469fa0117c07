import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * A vaulted card. The number lives only inside `ciphertext` (AES-256-GCM under a per-record data
 * key, itself wrapped by the key-encryption key `kekId`); everything else is masked metadata.
 * The unique index is what makes concurrent adds of one card yield one token.
 */
@Entity({ schema: 'vault', name: 'token_cards' })
@Index('token_cards_dedup', ['merchantId', 'fingerprint', 'expYear', 'expMonth'], { unique: true })
export class TokenCardEntity {
  @PrimaryColumn('char', { length: 64 })
  token: string;

  @Column('uuid', { name: 'merchant_id' })
  merchantId: string;

  @Column('text')
  fingerprint: string;

  @Column('smallint', { name: 'exp_year' })
  expYear: number;

  @Column('smallint', { name: 'exp_month' })
  expMonth: number;

  @Column('text')
  masked: string;

  @Column('text')
  brand: string;

  @Column('text')
  holder: string;

  @Column('jsonb', { nullable: true })
  billing: Record<string, string> | null;

  @Index('token_cards_kek')
  @Column('text', { name: 'kek_id' })
  kekId: string;

  @Column('bytea', { name: 'wrapped_key' })
  wrappedKey: Buffer;

  @Column('bytea')
  ciphertext: Buffer;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
