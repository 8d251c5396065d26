import { canonicalize } from '@lib/a2a-protocol';
import type { AdminApiConfig } from '@lib/config';
import { guardedFetch, PushAllowlist, type GuardedFetch } from '@lib/push';
import {
  agentIdOf,
  Conflict,
  InvalidInput,
  isId,
  NotFound,
  parseInput,
  workerPolicySchema,
  type AgentRecord,
  type AgentRef,
  type AgentStore,
  type CredentialStore,
  type TenantId,
} from '@lib/tenancy';
import {
  describeUpstreamError,
  fetchExtendedCard,
  fetchUpstreamCard,
  importCard,
  OAuthTokens,
  openHeaders,
  sealContext,
  SecretBox,
  summaryOf,
  TokenRefused,
  UPSTREAM_BINDINGS,
  UpstreamCardError,
  withExtendedCard,
  withKeptExtendedCard,
  type ImportedCard,
  type OAuth2Client,
  type UpstreamRow,
  type UpstreamStore,
  type UpstreamSummary,
  type UpstreamWrite,
} from '@lib/upstream';
import { z } from './openapi-zod';

/** Header names as RFC 9110 tokens; those the bridge's transport sets itself cannot be chosen. */
const RESERVED_HEADERS = new Set([
  'host',
  'content-length',
  'content-type',
  'transfer-encoding',
  'connection',
  'a2a-version',
]);
const headerName = z
  .string()
  .regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,128}$/, 'must be an HTTP header name')
  .refine((name) => !RESERVED_HEADERS.has(name.toLowerCase()), 'is set by the bridge itself');
const headerValue = z
  .string()
  .min(1)
  .max(8_192)
  .regex(/^[\t\x20-\x7e\x80-\xff]*$/, 'must be a valid header value');

/** The body of an import (docs/upstream.md). */
export const agentImportSchema = z
  .object({
    cardUrl: z
      .string()
      .url()
      .max(2_048)
      .describe(
        "the upstream agent card's URL, e.g. https://agent.example/.well-known/agent-card.json",
      ),
    headers: z
      .record(headerName, headerValue)
      .optional()
      .describe(
        'Sent with the card request and every call upstream (an API key, `Authorization`); stored ' +
          'sealed, never answered. Omitted: no headers.',
      ),
    binding: z.enum(UPSTREAM_BINDINGS).optional(),
    oauth2: z
      .object({
        tokenUrl: z
          .string()
          .url()
          .max(2_048)
          .refine((url) => /^https?:\/\//.test(url), 'must be an http(s) URL'),
        clientId: z.string().min(1).max(1_024),
        clientSecret: z.string().min(1).max(4_096).openapi({ writeOnly: true }),
        scope: z.string().min(1).max(1_024).optional(),
      })
      .strict()
      .optional()
      .describe(
        'OAuth 2 client credentials (RFC 6749 §4.4): the bridge gets a bearer token at tokenUrl and ' +
          'sends it upstream, cached until it expires; the secret is stored sealed, never answered.',
      ),
  })
  .strict();

/** The audit operation of an upstream's extended card that an import or sync could not read. */
export const EXTENDED_CARD_OPERATION = 'admin.agent.extended-card';

/**
 * Something an import or sync could not do, although the agent was imported: the upstream declares an
 * extended card that could not be read (the agent is served without one, or with the one read before).
 */
export interface ImportWarning {
  code: 'EXTENDED_CARD_NOT_READ';
  message: string;
}

/** An imported agent: its definition, and what the admin API shows of its upstream. */
export interface ImportedAgent {
  agent: AgentRecord;
  upstream: UpstreamSummary;
  /** The definition or the upstream changed (an import creating the agent counts). */
  changed: boolean;
  created: boolean;
  warnings: ImportWarning[];
}

/** OAuth 2 client credentials in the clear, for a bearer token of the extended card's request. */
interface OAuthCredentials {
  client: OAuth2Client;
  secret: string;
}

/**
 * Imports existing A2A servers as hosted agents (docs/upstream.md): reads the upstream card through the SSRF
 * guard, writes the agent's definition from it, issues the worker credential the bridge registers with, and
 * records the upstream with its secrets sealed. `sync` reads the card again.
 */
export class UpstreamImporter {
  private readonly allowlist: PushAllowlist;
  private readonly box: SecretBox | undefined;
  private readonly fetches = new Map<string, GuardedFetch>();

  constructor(
    private readonly config: Pick<
      AdminApiConfig,
      | 'UPSTREAM_SECRETS_KEY'
      | 'UPSTREAM_ALLOWLIST'
      | 'UPSTREAM_CARD_TIMEOUT_MS'
      | 'UPSTREAM_CARD_LIMIT_BYTES'
    >,
    private readonly agents: AgentStore,
    private readonly credentials: CredentialStore,
    private readonly upstreams: UpstreamStore,
  ) {
    this.allowlist = new PushAllowlist(config.UPSTREAM_ALLOWLIST);
    this.box = config.UPSTREAM_SECRETS_KEY
      ? SecretBox.fromBase64(config.UPSTREAM_SECRETS_KEY)
      : undefined;
  }

  async import(tenantId: TenantId, agentId: string, body: unknown): Promise<ImportedAgent> {
    if (!isId(agentId)) {
      throw new InvalidInput('invalid agent id', [
        { field: 'agentId', description: 'no "/", white space or control characters, 1 to 128' },
      ]);
    }
    const spec = parseInput(agentImportSchema, body, 'import');
    const box = this.secretBox();
    const ref: AgentRef = { tenantId, agentId: agentIdOf(agentId) };
    const headers = spec.headers ?? {};
    const before = await this.upstreams.get(ref);
    const { oauth2 } = spec;
    const oauth: OAuthCredentials | undefined = oauth2 && {
      client: {
        tokenUrl: oauth2.tokenUrl,
        clientId: oauth2.clientId,
        ...(oauth2.scope !== undefined ? { scope: oauth2.scope } : {}),
      },
      secret: oauth2.clientSecret,
    };
    return this.write(ref, box, {
      cardUrl: spec.cardUrl,
      binding: spec.binding,
      headers,
      sealHeaders: true,
      oauth2: oauth
        ? {
            client: oauth.client,
            sealedSecret: box.seal(oauth.secret, sealContext(ref, 'oauth2-secret')),
          }
        : null,
      oauth,
      before,
    });
  }

  /** Reads the card of an imported agent again, with its stored headers, on the binding it was imported on. */
  async sync(ref: AgentRef): Promise<ImportedAgent> {
    const box = this.secretBox();
    const before = await this.upstreams.get(ref);
    if (!before) {
      throw new NotFound(`agent ${ref.agentId} of tenant ${ref.tenantId} was not imported`);
    }
    const headers = openHeaders(box, before);
    return this.write(ref, box, {
      cardUrl: before.cardUrl,
      binding: before.binding,
      headers,
      sealHeaders: false,
      oauth:
        before.oauth2 && before.oauth2SecretSealed
          ? {
              client: before.oauth2,
              secret: box.open(before.oauth2SecretSealed, sealContext(ref, 'oauth2-secret')),
            }
          : undefined,
      before,
    });
  }

  async get(ref: AgentRef): Promise<UpstreamSummary> {
    const row = await this.upstreams.get(ref);
    if (!row) {
      throw new NotFound(`agent ${ref.agentId} of tenant ${ref.tenantId} was not imported`);
    }
    return summaryOf(row);
  }

  private async write(
    ref: AgentRef,
    box: SecretBox,
    how: {
      cardUrl: string;
      binding: UpstreamRow['binding'] | undefined;
      headers: Record<string, string>;
      sealHeaders: boolean;
      /** With the headers: what an import sets (null: none); a sync keeps what is stored. */
      oauth2?: UpstreamWrite['oauth2'];
      /** The OAuth 2 credentials the extended card is asked for with, if any. */
      oauth: OAuthCredentials | undefined;
      before: UpstreamRow | undefined;
    },
  ): Promise<ImportedAgent> {
    let imported;
    let fetched;
    try {
      fetched = await fetchUpstreamCard(this.fetchFor(ref.tenantId), how.cardUrl, how.headers);
      imported = importCard(fetched.json, how.binding);
    } catch (error) {
      if (error instanceof UpstreamCardError) {
        const field = error.field === 'cardUrl' ? 'cardUrl' : `card.${error.field}`;
        throw new InvalidInput(`cannot import ${how.cardUrl}: ${error.message}`, [
          { field, description: error.message },
        ]);
      }
      throw error;
    }
    const existing = await this.agents.get(ref).catch((error: unknown) => {
      if (error instanceof NotFound) {
        return undefined;
      }
      throw error;
    });
    const warnings: ImportWarning[] = [];
    let definition = imported.definition;
    if (imported.extendedCard) {
      try {
        definition = withExtendedCard(
          definition,
          await this.extendedCard(ref.tenantId, fetched.json, imported, how),
        );
      } catch (error) {
        // The public card is enough to serve the agent: the import goes on, and says what it could not do.
        definition = withKeptExtendedCard(definition, existing?.card);
        warnings.push({
          code: 'EXTENDED_CARD_NOT_READ',
          message:
            `the upstream declares an extended card, which was not read: ${notRead(error)}; the agent is ` +
            (definition.extendedCard
              ? 'served with the extended card read before'
              : 'served without one'),
        });
      }
    }
    // An unchanged card is not written again: its ETag, caches and `updatedAt` stay as they are.
    const unchanged =
      existing !== undefined && canonicalize(existing.card) === canonicalize(definition);
    const { agent, created } = unchanged
      ? { agent: existing, created: false }
      : await this.agents.write(ref, {
          card: definition,
          policy: existing?.policy ?? workerPolicySchema.parse({}),
        });
    // The bridge's worker credential: issued at the first import, and issued again under the same id and
    // secret on every import (which also takes back a revocation an operator made by mistake); a sync
    // leaves it alone.
    let credential: { credentialId: string; sealed: Buffer };
    if (how.before) {
      credential = {
        credentialId: how.before.workerCredentialId,
        sealed: how.before.workerSecretSealed,
      };
      if (how.sealHeaders) {
        const secret = box.open(credential.sealed, sealContext(ref, 'worker-secret'));
        await this.credentials.issueWorkerCredential(
          ref,
          { label: 'upstream bridge' },
          { credentialId: credential.credentialId, secret },
        );
      }
    } else {
      const issued = await this.credentials.issueWorkerCredential(ref, {
        label: 'upstream bridge',
      });
      credential = {
        credentialId: issued.credential.credentialId,
        sealed: box.seal(issued.secret, sealContext(ref, 'worker-secret')),
      };
    }
    const names = Object.keys(how.headers).sort();
    const { row, changed } = await this.upstreams.put(ref, {
      cardUrl: how.cardUrl,
      binding: imported.binding,
      endpoint: imported.endpoint,
      endpointTenant: imported.tenant,
      streaming: imported.streaming,
      card: fetched.json,
      cardSigned: imported.signed,
      cardVerified: fetched.verified,
      ...(how.sealHeaders
        ? {
            headers: {
              sealed:
                names.length > 0
                  ? box.seal(JSON.stringify(how.headers), sealContext(ref, 'headers'))
                  : null,
              names,
            },
            oauth2: how.oauth2 ?? null,
          }
        : {}),
      workerCredentialId: credential.credentialId,
      workerSecretSealed: credential.sealed,
    });
    return { agent, upstream: summaryOf(row), changed: changed || !unchanged, created, warnings };
  }

  /**
   * The upstream's extended card: GetExtendedAgentCard on the imported binding, with the headers and (OAuth 2)
   * a bearer token, through the guard and within the card's limits.
   */
  private async extendedCard(
    tenantId: TenantId,
    card: Record<string, unknown>,
    imported: ImportedCard,
    how: { headers: Record<string, string>; oauth: OAuthCredentials | undefined },
  ): Promise<Record<string, unknown>> {
    const fetch = this.fetchFor(tenantId);
    const token = how.oauth
      ? await new OAuthTokens(how.oauth.client, how.oauth.secret, fetch).token()
      : undefined;
    return fetchExtendedCard({
      card,
      binding: imported.binding,
      endpoint: imported.endpoint,
      fetch,
      allows: (host, address) => this.allowlist.allowed(tenantId, host, address),
      headers: token ? { ...how.headers, Authorization: `Bearer ${token}` } : how.headers,
      timeoutMs: this.config.UPSTREAM_CARD_TIMEOUT_MS,
      limitBytes: this.config.UPSTREAM_CARD_LIMIT_BYTES,
    });
  }

  private secretBox(): SecretBox {
    if (!this.box) {
      throw new Conflict(
        'importing agents needs UPSTREAM_SECRETS_KEY (32 bytes in base64) in the admin API and the bridge',
      );
    }
    return this.box;
  }

  /** The guarded fetch of a tenant: reserved addresses only as UPSTREAM_ALLOWLIST allows them. */
  private fetchFor(tenantId: TenantId): GuardedFetch {
    let fetch = this.fetches.get(tenantId);
    if (!fetch) {
      fetch = guardedFetch({
        allows: (host, address) => this.allowlist.allowed(tenantId, host, address),
        bodyLimitBytes: this.config.UPSTREAM_CARD_LIMIT_BYTES,
        timeoutMs: this.config.UPSTREAM_CARD_TIMEOUT_MS,
      });
      this.fetches.set(tenantId, fetch);
    }
    return fetch;
  }
}

/** Why the extended card was not read, as an operator is told it. */
function notRead(error: unknown): string {
  if (error instanceof UpstreamCardError || error instanceof TokenRefused) {
    return error.message;
  }
  return describeUpstreamError(error);
}
