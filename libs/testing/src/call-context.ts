import { CLIENT_SCOPES } from '@lib/authz';
import { agentIdOf, principalIdOf, tenantIdOf, type CallContext } from '@lib/tenancy';

/** The ids of a test caller, as plain strings; scopes default to a client key's. */
export interface TestCaller {
  tenantId: string;
  agentId: string;
  principalId: string;
  scopes?: readonly string[];
  binding?: string;
}

/** A CallContext as the ingress would make it after authenticating `caller`. */
export function callContext(caller: TestCaller): CallContext {
  return {
    tenantId: tenantIdOf(caller.tenantId),
    agentId: agentIdOf(caller.agentId),
    principalId: principalIdOf(caller.principalId),
    credentialId: null,
    scopes: caller.scopes ?? CLIENT_SCOPES,
    binding: caller.binding ?? 'JSONRPC',
    protocolVersion: '1.0',
    requestId: 'test',
  };
}
