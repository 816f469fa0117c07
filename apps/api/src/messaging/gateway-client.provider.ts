import { Provider } from '@nestjs/common';
import { BullMqClient } from '@app/messaging';
import { ApiConfig } from '../config/api.config';

export const GATEWAY_CLIENT = Symbol('GATEWAY_CLIENT');

export const gatewayClientProvider: Provider = {
  provide: GATEWAY_CLIENT,
  inject: [ApiConfig],
  useFactory: (config: ApiConfig) =>
    new BullMqClient({
      connection: config.base.redisUrl,
      prefix: config.base.queuePrefix,
      replyTimeoutMs: config.replyTimeoutMs,
      keepCompletedJobsS: config.base.keepCompletedJobsS,
      keepFailedJobsS: config.base.keepFailedJobsS,
    }),
};
