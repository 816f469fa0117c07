import { DynamicModule, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { Queue } from 'bullmq';
import { closeRedis, connectRedis, type RedisConnection } from '@app/platform';
import { queueOn } from '@app/messaging';
import {
  AuditEventsRepository,
  DeliveriesRepository,
  ListenersRepository,
  MerchantsRepository,
  RecoveriesRepository,
} from '@app/persistence';
import { AuditTrail } from '@app/operators';
import { appImports } from '@app/boot';
import { DELIVERY_QUEUE } from '@app/webhooks/delivery';
import { NotifierConfig } from './config/notifier.config';
import { DeliveriesService } from './deliveries/deliveries.service';
import { DeliveryWorker } from './deliveries/delivery.worker';
import { DeliverySweeper } from './deliveries/delivery.sweeper';
import { ListenerHealthRecorder } from './deliveries/listener-health.recorder';
import { RecoveryWorker } from './deliveries/recovery.worker';
import { EventSweeper } from './deliveries/event.sweeper';
import { StatusChangedHandler } from './deliveries/status-changed.handler';
import { REDIS, SLOTS_REDIS } from './redis.token';

@Module({})
export class NotifierModule implements OnApplicationShutdown {
  constructor(
    private readonly queue: Queue,
    @Inject(REDIS) private readonly redis: RedisConnection,
    @Inject(SLOTS_REDIS) private readonly slotsRedis: RedisConnection,
  ) {}

  static forRoot(config: NotifierConfig): DynamicModule {
    return {
      module: NotifierModule,
      imports: appImports('notifier', config.base, config.dbPoolSize),
      controllers: [StatusChangedHandler],
      providers: [
        { provide: NotifierConfig, useValue: config },
        // Redis down is /health's to report and the jobs' to retry: an unhandled 'error' would crash.
        {
          provide: REDIS,
          useFactory: () => connectRedis(config.base.redis, { maxRetriesPerRequest: null }).on('error', () => undefined),
        },
        {
          provide: SLOTS_REDIS,
          // Like the queue's, it waits for Redis while it is down rather than failing a call.
          useFactory: () =>
            connectRedis(config.base.redis, { maxRetriesPerRequest: null, enableAutoPipelining: true }).on('error', () => undefined),
        },
        {
          provide: Queue,
          inject: [REDIS],
          // Its connection also feeds the delivery worker (which duplicates it for blocking reads).
          useFactory: (redis: RedisConnection) =>
            new Queue(DELIVERY_QUEUE, queueOn(redis, config.base.queuePrefix, DELIVERY_QUEUE)).on('error', () => undefined),
        },
        DeliveriesRepository,
        MerchantsRepository,
        ListenersRepository,
        RecoveriesRepository,
        AuditEventsRepository,
        AuditTrail,
        ListenerHealthRecorder,
        DeliveriesService,
        DeliveryWorker,
        DeliverySweeper,
        EventSweeper,
        RecoveryWorker,
      ],
    };
  }

  async onApplicationShutdown(): Promise<void> {
    await this.queue.close();
    await Promise.all([closeRedis(this.redis), closeRedis(this.slotsRedis)]);
  }
}
