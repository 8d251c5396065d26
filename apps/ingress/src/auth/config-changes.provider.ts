import { ConfigChanges } from '@lib/tenancy';
import {
  Inject,
  Injectable,
  Logger,
  type OnModuleDestroy,
  type OnModuleInit,
} from '@nestjs/common';
import { INGRESS_CONFIG, type IngressModuleConfig } from '../tokens';

/** The ingress's ear for configuration changes: authentication and agent lookups drop their caches. */
@Injectable()
export class IngressConfigChanges extends ConfigChanges implements OnModuleInit, OnModuleDestroy {
  constructor(@Inject(INGRESS_CONFIG) config: IngressModuleConfig) {
    super(config.POSTGRES_URL, 'a2a-ingress:config', (message) =>
      Logger.warn(message, IngressConfigChanges.name),
    );
  }

  onModuleInit(): Promise<void> {
    return this.start();
  }

  onModuleDestroy(): Promise<void> {
    return this.stop();
  }
}
