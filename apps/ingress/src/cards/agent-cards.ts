import type { IngressConfig } from '@lib/config';
import { Inject, Injectable } from '@nestjs/common';
import { INGRESS_CONFIG } from '../tokens';
import type { PublicOrigin } from './agent-card.builder';

/** How the request for a card arrived, for building URLs when no public base URL is configured. */
export interface RequestOrigin {
  protocol: string;
  host: string | undefined;
}

/**
 * Where clients reach the platform, as written into agent cards: PUBLIC_BASE_URL (else the request's own
 * scheme and Host) and PUBLIC_GRPC_ADDRESS (else that host with A2A_GRPC_PORT).
 */
@Injectable()
export class PublicOrigins {
  constructor(@Inject(INGRESS_CONFIG) private readonly config: IngressConfig) {}

  resolve(request?: RequestOrigin): PublicOrigin {
    const fallbackHost = `${this.config.INGRESS_HOST}:${this.config.INGRESS_PORT}`;
    const baseUrl =
      this.config.PUBLIC_BASE_URL ??
      `${request?.protocol ?? 'http'}://${request?.host ?? fallbackHost}`;
    const grpcAddress =
      this.config.PUBLIC_GRPC_ADDRESS ??
      `${new URL(baseUrl).hostname}:${this.config.A2A_GRPC_PORT}`;
    return { baseUrl: baseUrl.replace(/\/+$/, ''), grpcAddress };
  }
}
