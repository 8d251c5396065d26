import type { AgentId, TenantId } from '@lib/ids';
import {
  CredentialStore,
  type AdminKeyRecord,
  type ApiKeyRecord,
  type Issued,
  type WorkerCredentialRecord,
} from '@lib/tenancy';
import {
  Body,
  Controller,
  Delete,
  Get,
  Param,
  Post,
  UseFilters,
  UseGuards,
  UseInterceptors,
} from '@nestjs/common';
import { AdminAuditInterceptor } from './admin-audit.interceptor';
import { AdminErrorsFilter } from './admin-errors.filter';
import { AdminRoute } from './admin-route';
import { AdminGuard } from './admin.guard';
import { AgentIdPipe, TenantIdPipe } from './params';

/** A tenant's API keys: issued with scopes, an optional expiry and a label; the secret is shown once. */
@Controller('admin/v1/tenants/:tenantId/api-keys')
@UseGuards(AdminGuard)
@UseFilters(AdminErrorsFilter)
@UseInterceptors(AdminAuditInterceptor)
export class ApiKeysController {
  constructor(private readonly credentials: CredentialStore) {}

  @Post()
  @AdminRoute('admin.api-key.issue', 'tenant:admin')
  issue(
    @Param('tenantId', TenantIdPipe) tenantId: TenantId,
    @Body() body: unknown,
  ): Promise<Issued<ApiKeyRecord>> {
    return this.credentials.issueApiKey(tenantId, body);
  }

  @Get()
  @AdminRoute('admin.api-key.list', 'tenant:admin')
  async list(
    @Param('tenantId', TenantIdPipe) tenantId: TenantId,
  ): Promise<{ apiKeys: ApiKeyRecord[] }> {
    return { apiKeys: await this.credentials.listApiKeys(tenantId) };
  }

  /** Revokes the key on every replica within a second; idempotent. */
  @Delete(':keyId')
  @AdminRoute('admin.api-key.revoke', 'tenant:admin')
  revoke(
    @Param('tenantId', TenantIdPipe) tenantId: TenantId,
    @Param('keyId') keyId: string,
  ): Promise<ApiKeyRecord> {
    return this.credentials.revokeApiKey(tenantId, keyId);
  }
}

/** Worker credentials, each bound to one (tenant, agent). */
@Controller('admin/v1/tenants/:tenantId/agents/:agentId/worker-credentials')
@UseGuards(AdminGuard)
@UseFilters(AdminErrorsFilter)
@UseInterceptors(AdminAuditInterceptor)
export class WorkerCredentialsController {
  constructor(private readonly credentials: CredentialStore) {}

  @Post()
  @AdminRoute('admin.worker-credential.issue', 'tenant:admin')
  issue(
    @Param('tenantId', TenantIdPipe) tenantId: TenantId,
    @Param('agentId', AgentIdPipe) agentId: AgentId,
    @Body() body: unknown,
  ): Promise<Issued<WorkerCredentialRecord>> {
    return this.credentials.issueWorkerCredential({ tenantId, agentId }, body ?? {});
  }

  @Get()
  @AdminRoute('admin.worker-credential.list', 'tenant:admin')
  async list(
    @Param('tenantId', TenantIdPipe) tenantId: TenantId,
    @Param('agentId', AgentIdPipe) agentId: AgentId,
  ): Promise<{ workerCredentials: WorkerCredentialRecord[] }> {
    return {
      workerCredentials: await this.credentials.listWorkerCredentials({ tenantId, agentId }),
    };
  }

  @Delete(':credentialId')
  @AdminRoute('admin.worker-credential.revoke', 'tenant:admin')
  revoke(
    @Param('tenantId', TenantIdPipe) tenantId: TenantId,
    @Param('agentId', AgentIdPipe) agentId: AgentId,
    @Param('credentialId') credentialId: string,
  ): Promise<WorkerCredentialRecord> {
    return this.credentials.revokeWorkerCredential({ tenantId, agentId }, credentialId);
  }
}

/** Platform-admin keys. */
@Controller('admin/v1/admin-keys')
@UseGuards(AdminGuard)
@UseFilters(AdminErrorsFilter)
@UseInterceptors(AdminAuditInterceptor)
export class AdminKeysController {
  constructor(private readonly credentials: CredentialStore) {}

  @Post()
  @AdminRoute('admin.admin-key.issue', 'platform:admin')
  issue(@Body() body: unknown): Promise<Issued<AdminKeyRecord>> {
    return this.credentials.issueAdminKey(body);
  }

  @Get()
  @AdminRoute('admin.admin-key.list', 'platform:admin')
  async list(): Promise<{ adminKeys: AdminKeyRecord[] }> {
    return { adminKeys: await this.credentials.listAdminKeys() };
  }

  @Delete(':keyId')
  @AdminRoute('admin.admin-key.revoke', 'platform:admin')
  revoke(@Param('keyId') keyId: string): Promise<AdminKeyRecord> {
    return this.credentials.revokeAdminKey(keyId);
  }
}
