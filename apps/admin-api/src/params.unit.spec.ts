import { agentIdOf, tenantIdOf, type AgentId, type TenantId } from '@lib/ids';
import { InvalidInput, NotFound } from '@lib/tenancy';
import { Controller, Get, Param, UseFilters, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminErrorsFilter } from './admin-errors.filter';
import { auditQuery } from './audit.controller';
import { AgentIdPipe, parseQuery, TenantIdPipe } from './params';
import { deliveryQuery } from './push-deliveries.controller';
import { taskEventsQuery, taskListQuery } from './tasks.controller';

/** The fields a refused query names. */
function refused(parse: () => unknown): string[] {
  try {
    parse();
  } catch (err) {
    if (err instanceof InvalidInput) {
      return err.fields.map((f) => f.field);
    }
    throw err;
  }
  throw new Error('the query was accepted');
}

describe('query parameters', () => {
  it('are read by the route’s schema, with its defaults, ignoring parameters it does not name', () => {
    expect(
      parseQuery(taskListQuery, { state: 'TASK_STATE_WORKING', limit: '5', other: 'x' }),
    ).toEqual({ state: 'TASK_STATE_WORKING', limit: 5 });
    expect(parseQuery(taskListQuery, {})).toEqual({ limit: 50 });
    expect(parseQuery(taskEventsQuery, {})).toEqual({ after: 0, limit: 200 });
    expect(parseQuery(deliveryQuery, { task: 't1', state: 'dead' })).toEqual({
      task: 't1',
      state: 'dead',
    });
  });

  it('are refused with 400 naming each bad one: repeated, empty, out of range, not a value', () => {
    expect(refused(() => parseQuery(taskListQuery, { state: 'DONE', limit: '0' }))).toEqual([
      'state',
      'limit',
    ]);
    expect(refused(() => parseQuery(taskListQuery, { agentId: ['a', 'b'] }))).toEqual(['agentId']);
    expect(refused(() => parseQuery(taskListQuery, { contextId: '' }))).toEqual(['contextId']);
    expect(refused(() => parseQuery(taskEventsQuery, { after: 'x' }))).toEqual(['after']);
    expect(refused(() => parseQuery(taskEventsQuery, { limit: '1.5' }))).toEqual(['limit']);
    expect(refused(() => parseQuery(deliveryQuery, { limit: '501' }))).toEqual(['limit']);
    expect(refused(() => parseQuery(auditQuery, { outcome: 'meh', from: 'soon' }))).toEqual([
      'from',
      'outcome',
    ]);
  });

  it('read times as Date.parse does', () => {
    expect(parseQuery(auditQuery, { from: '2025-01-02T03:04:05Z', to: '2025-02-01' })).toEqual({
      from: new Date('2025-01-02T03:04:05Z'),
      to: new Date('2025-02-01'),
    });
  });
});

describe('path parameters', () => {
  const tenant = new TenantIdPipe();
  const agent = new AgentIdPipe();

  it('are the branded ids the path names', () => {
    expect(tenant.transform('acme')).toBe(tenantIdOf('acme'));
    expect(agent.transform('echo')).toBe(agentIdOf('echo'));
  });

  it('that no tenant or agent can have are not found (404), like unknown ones', () => {
    for (const raw of ['', 'a/b', 'a b', 'a\u0000', 'x'.repeat(129)]) {
      expect(() => tenant.transform(raw)).toThrow(new NotFound(`no tenant ${raw.slice(0, 140)}`));
      expect(() => agent.transform(raw)).toThrow(new NotFound(`no agent ${raw.slice(0, 140)}`));
    }
    expect(() => tenant.transform('y'.repeat(300))).toThrow(
      new NotFound(`no tenant ${'y'.repeat(140)}`),
    );
  });

  describe('on a route', () => {
    @Controller('tenants/:tenantId/agents/:agentId')
    @UseFilters(AdminErrorsFilter)
    class PathController {
      @Get()
      get(
        @Param('tenantId', TenantIdPipe) tenantId: TenantId,
        @Param('agentId', AgentIdPipe) agentId: AgentId,
      ): { tenantId: TenantId; agentId: AgentId } {
        return { tenantId, agentId };
      }
    }

    let app: INestApplication;
    let url: string;

    beforeAll(async () => {
      const module = await Test.createTestingModule({ controllers: [PathController] }).compile();
      app = module.createNestApplication({ logger: false });
      await app.listen(0, '127.0.0.1');
      url = await app.getUrl();
    });

    afterAll(async () => {
      await app.close();
    });

    async function get(path: string): Promise<{ status: number; body: unknown }> {
      const response = await fetch(`${url}${path}`);
      return { status: response.status, body: await response.json() };
    }

    it('reach the handler as ids', async () => {
      expect(await get('/tenants/acme/agents/echo')).toStrictEqual({
        status: 200,
        body: { tenantId: 'acme', agentId: 'echo' },
      });
    });

    it('answer a malformed id with the admin API’s 404, the agent’s first as before', async () => {
      const notFound = (message: string) => ({
        status: 404,
        body: { error: { code: 404, status: 'NOT_FOUND', message } },
      });
      expect(await get('/tenants/a%20b/agents/echo')).toStrictEqual(notFound('no tenant a b'));
      expect(await get('/tenants/acme/agents/e%2Fcho')).toStrictEqual(notFound('no agent e/cho'));
      expect(await get('/tenants/a%20b/agents/e%2Fcho')).toStrictEqual(notFound('no agent e/cho'));
    });
  });
});
