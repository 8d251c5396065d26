import type { IngressConfig } from '@lib/config';
import { Inject, Injectable } from '@nestjs/common';
import { INGRESS_CONFIG } from '../tokens';
import type { PublicOrigin } from './agent-card.builder';

/** How the request for a card arrived, for building URLs when no public base URL is configured. */
export interface RequestOrigin {
  protocol: string;
  host: string | undefined;
}

/** A Host header value that is a plain `host[:port]` (RFC 9110 §7.2): a name, IPv4 or bracketed IPv6. */
const HOST =
  /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/**
 * Where clients reach the platform, as written into agent cards: PUBLIC_BASE_URL (else the request's own
 * scheme and Host) and PUBLIC_GRPC_ADDRESS (else that host with A2A_GRPC_PORT). A base URL keeps its path, so
 * a proxy that serves the platform under a prefix gets URLs with that prefix. A missing or malformed Host falls
 * back to the ingress's own listen address.
 */
@Injectable()
export class PublicOrigins {
  constructor(@Inject(INGRESS_CONFIG) private readonly config: IngressConfig) {}

  resolve(request?: RequestOrigin): PublicOrigin {
    const fallbackHost = `${this.config.INGRESS_HOST}:${this.config.INGRESS_PORT}`;
    const host =
      request?.host !== undefined && HOST.test(request.host) ? request.host : fallbackHost;
    const protocol = request?.protocol === 'https' ? 'https' : 'http';
    const baseUrl = (this.config.PUBLIC_BASE_URL ?? `${protocol}://${host}`).replace(/\/+$/, '');
    const grpcAddress =
      this.config.PUBLIC_GRPC_ADDRESS ??
      `${new URL(baseUrl).hostname}:${this.config.A2A_GRPC_PORT}`;
    return { baseUrl, grpcAddress };
  }
}
