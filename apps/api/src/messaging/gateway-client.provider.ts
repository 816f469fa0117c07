import { Provider } from '@nestjs/common';
import { queueClient } from '@app/boot';
import { TypedClient } from '@app/messaging';
import { ApiConfig } from '../config/api.config';

export const GATEWAY_CLIENT = Symbol('GATEWAY_CLIENT');

export const gatewayClientProvider: Provider = {
  provide: GATEWAY_CLIENT,
  inject: [ApiConfig],
  useFactory: (config: ApiConfig) => new TypedClient(queueClient(config.base, config.replyTimeoutMs)),
};
