import { DynamicModule, Logger, Module, OnModuleInit } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { databaseIdentity, identityProblem, RoleOwner } from '@app/persistence';
import type { BaseConfig } from '@app/platform';

/**
 * At boot: who is this app connected as? In production a superuser or the tables' owner (who
 * could read the vault whatever the grants say) fails the boot with an error naming DATABASE_URL;
 * elsewhere (a developer's superuser URL) it is a warning, once.
 */
export class DatabaseRoleCheck implements OnModuleInit {
  private readonly logger = new Logger('Database');

  constructor(
    private readonly db: DataSource,
    private readonly app: RoleOwner,
    private readonly nodeEnv: BaseConfig['nodeEnv'],
  ) {}

  async onModuleInit(): Promise<void> {
    const problem = identityProblem(await databaseIdentity(this.db), this.app);
    if (!problem) return;
    if (this.nodeEnv === 'production') throw new Error(problem);
    this.logger.warn(`${problem}; allowed outside production`);
  }
}

@Module({})
export class DatabaseRoleCheckModule {
  static forRoot(app: RoleOwner, base: BaseConfig): DynamicModule {
    return {
      module: DatabaseRoleCheckModule,
      providers: [
        { provide: DatabaseRoleCheck, inject: [DataSource], useFactory: (db: DataSource) => new DatabaseRoleCheck(db, app, base.nodeEnv) },
      ],
    };
  }
}
