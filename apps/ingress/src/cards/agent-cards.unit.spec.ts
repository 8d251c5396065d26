import { ingressSchema, loadConfig } from '@lib/config';
import { describe, expect, it } from 'vitest';
import { PublicOrigins } from './agent-cards';

const origins = (env: Record<string, string> = {}): PublicOrigins =>
  new PublicOrigins(
    loadConfig(ingressSchema, { INGRESS_HOST: '10.0.0.5', INGRESS_PORT: '8080', ...env }),
  );

describe('PublicOrigins (URLs written into agent cards, spec digest §10.11)', () => {
  it('without PUBLIC_BASE_URL uses the request scheme and Host, and that host with A2A_GRPC_PORT', () => {
    expect(
      origins({ A2A_GRPC_PORT: '7000' }).resolve({ protocol: 'https', host: 'a.example:8443' }),
    ).toStrictEqual({ baseUrl: 'https://a.example:8443', grpcAddress: 'a.example:7000' });
    expect(origins().resolve({ protocol: 'http', host: '[::1]:9000' })).toStrictEqual({
      baseUrl: 'http://[::1]:9000',
      grpcAddress: '[::1]:50051',
    });
  });

  it('falls back to the listen address for a missing or malformed Host', () => {
    for (const host of [undefined, '', 'a b', 'evil.example/path', 'user@evil.example', 'a:b:c']) {
      expect(origins().resolve({ protocol: 'http', host }), String(host)).toStrictEqual({
        baseUrl: 'http://10.0.0.5:8080',
        grpcAddress: '10.0.0.5:50051',
      });
    }
  });

  it('with PUBLIC_BASE_URL ignores the request and keeps the path prefix (without a trailing slash)', () => {
    const resolved = origins({ PUBLIC_BASE_URL: 'https://agents.example.com/a2a-prefix/' }).resolve(
      { protocol: 'http', host: 'internal:8080' },
    );
    expect(resolved).toStrictEqual({
      baseUrl: 'https://agents.example.com/a2a-prefix',
      grpcAddress: 'agents.example.com:50051',
    });
  });

  it('PUBLIC_GRPC_ADDRESS wins for the gRPC interface', () => {
    const resolved = origins({
      PUBLIC_BASE_URL: 'https://agents.example.com',
      PUBLIC_GRPC_ADDRESS: 'grpc.example.com:443',
    }).resolve({ protocol: 'http', host: 'internal:8080' });
    expect(resolved).toStrictEqual({
      baseUrl: 'https://agents.example.com',
      grpcAddress: 'grpc.example.com:443',
    });
  });
});
