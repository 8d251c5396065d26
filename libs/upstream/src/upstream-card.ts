import { agentCardDefinitionSchema, type AgentCardDefinition } from '@lib/tenancy';
import { z } from 'zod';

/** The bindings the bridge speaks to an upstream agent, as `AgentInterface.protocolBinding` names them. */
export const UPSTREAM_BINDINGS = ['JSONRPC', 'HTTP+JSON', 'GRPC'] as const;
export type UpstreamBinding = (typeof UPSTREAM_BINDINGS)[number];

/** An upstream card that cannot be imported: the import answers 400 naming `field` of the card. */
export class UpstreamCardError extends Error {
  override readonly name = 'UpstreamCardError';

  constructor(
    message: string,
    readonly field = 'card',
  ) {
    super(message);
  }
}

/** What an import takes from an upstream card. */
export interface ImportedCard {
  /** The hosted agent's card definition: the upstream's own fields, the platform's capabilities. */
  readonly definition: AgentCardDefinition;
  readonly binding: UpstreamBinding;
  /** The URL of the chosen interface. */
  readonly endpoint: string;
  /** `AgentInterface.tenant` of the chosen interface (sent with every call), or empty. */
  readonly tenant: string;
  /** The upstream streams (SendStreamingMessage, SubscribeToTask); else blocking calls and polling. */
  readonly streaming: boolean;
  /** The upstream card declares an extended card (GetExtendedAgentCard). */
  readonly extendedCard: boolean;
  /** The upstream card carries at least one JWS signature. */
  readonly signed: boolean;
}

const text = z.string().trim();
const list = <T extends z.ZodTypeAny>(item: T) => z.array(item).optional().default([]);
const upstreamSkill = z
  .object({
    id: text,
    name: text,
    description: z.string().optional(),
    tags: list(z.string()),
    examples: list(z.string()),
    inputModes: z.array(z.string()).optional(),
    outputModes: z.array(z.string()).optional(),
  })
  .passthrough();

/** The upstream card as far as the import reads it; other fields are kept in the stored copy. */
const upstreamCardSchema = z
  .object({
    name: text.min(1),
    description: z.string().optional().default(''),
    version: z.string().optional(),
    supportedInterfaces: z
      .array(
        z
          .object({
            // gRPC interfaces name `host:port`, the HTTP bindings a URL (checked once chosen).
            url: z.string().min(1).max(2_048),
            protocolBinding: z.string(),
            protocolVersion: z.string().optional(),
            tenant: z.string().optional(),
          })
          .passthrough(),
      )
      .min(1),
    capabilities: z
      .object({
        streaming: z.boolean().optional(),
        extendedAgentCard: z.boolean().optional(),
        extensions: list(
          z
            .object({
              uri: z.string(),
              description: z.string().optional(),
              required: z.boolean().optional(),
              params: z.record(z.unknown()).optional(),
            })
            .passthrough(),
        ),
      })
      .passthrough()
      .optional()
      .default({}),
    defaultInputModes: list(z.string()),
    defaultOutputModes: list(z.string()),
    skills: list(upstreamSkill),
    documentationUrl: z.string().optional(),
    iconUrl: z.string().optional(),
    signatures: list(z.unknown()),
  })
  .passthrough();

/**
 * Reads an upstream agent card (ProtoJSON) and picks the binding to call it on: `wanted` when the card offers
 * it, else the first interface it lists that the bridge speaks (the card lists them in preference order).
 * Throws {@link UpstreamCardError} naming what is wrong.
 */
export function importCard(json: unknown, wanted?: UpstreamBinding): ImportedCard {
  const parsed = upstreamCardSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path.join('.') || 'card';
    throw new UpstreamCardError(`not an A2A agent card: ${field}: ${issue?.message ?? ''}`, field);
  }
  const card = parsed.data;
  const spoken = card.supportedInterfaces.filter((i) =>
    (UPSTREAM_BINDINGS as readonly string[]).includes(i.protocolBinding),
  );
  const chosen = wanted ? spoken.find((i) => i.protocolBinding === wanted) : spoken[0];
  if (!chosen) {
    const offered = card.supportedInterfaces.map((i) => i.protocolBinding).join(', ');
    throw new UpstreamCardError(
      wanted
        ? `the card offers no ${wanted} interface (it offers ${offered})`
        : `the card offers no binding the platform speaks (it offers ${offered}; wanted one of ${UPSTREAM_BINDINGS.join(', ')})`,
      'supportedInterfaces',
    );
  }
  if (chosen.protocolBinding !== 'GRPC' && !/^https?:\/\/[^/]/i.test(chosen.url)) {
    throw new UpstreamCardError(
      `the ${chosen.protocolBinding} interface's url is not an http(s) URL: ${chosen.url}`,
      'supportedInterfaces',
    );
  }
  if (chosen.protocolVersion !== undefined && !chosen.protocolVersion.startsWith('1.')) {
    throw new UpstreamCardError(
      `the ${chosen.protocolBinding} interface speaks A2A ${chosen.protocolVersion}; the bridge speaks 1.x`,
      'supportedInterfaces',
    );
  }
  const definition = agentCardDefinitionSchema.safeParse({
    name: card.name,
    description: card.description.trim() || `${card.name} (imported A2A agent)`,
    version: card.version?.trim() || '1.0.0',
    defaultInputModes: orDefault(card.defaultInputModes),
    defaultOutputModes: orDefault(card.defaultOutputModes),
    skills: card.skills.map(hostedSkill),
    ...(card.documentationUrl ? { documentationUrl: card.documentationUrl } : {}),
    ...(card.iconUrl ? { iconUrl: card.iconUrl } : {}),
    ...(card.capabilities.extensions.length > 0
      ? {
          extensions: card.capabilities.extensions.map((e) => ({
            uri: e.uri,
            ...(e.description !== undefined ? { description: e.description } : {}),
            ...(e.required !== undefined ? { required: e.required } : {}),
            ...(e.params !== undefined ? { params: e.params } : {}),
          })),
        }
      : {}),
    // The platform streams and delivers webhooks whatever the upstream does; an upstream may answer a message
    // with a bare Message, which the platform passes on as such.
    pushNotifications: true,
    messageReplies: true,
  });
  if (!definition.success) {
    const issue = definition.error.issues[0];
    const field = issue?.path.join('.') || 'card';
    throw new UpstreamCardError(
      `the card cannot be hosted: ${field}: ${issue?.message ?? ''}`,
      field,
    );
  }
  return {
    definition: definition.data,
    binding: chosen.protocolBinding as UpstreamBinding,
    endpoint: chosen.url,
    tenant: chosen.tenant ?? '',
    streaming: card.capabilities.streaming === true,
    extendedCard: card.capabilities.extendedAgentCard === true,
    signed: card.signatures.length > 0,
  };
}

/** What the upstream's extended card says (GetExtendedAgentCard answers a whole card; the rest is its public one). */
const extendedCardSchema = z
  .object({ description: z.string().optional().default(''), skills: list(upstreamSkill) })
  .passthrough();

type HostedSkill = NonNullable<AgentCardDefinition['skills']>[number];
type ExtendedPart = NonNullable<AgentCardDefinition['extendedCard']>;

/**
 * The definition with what the upstream's extended card adds to its public one, served to authenticated
 * callers by GetExtendedAgentCard: the skills the public card does not list (by id) and its description when
 * it differs; `capabilities.extendedAgentCard` is declared. Throws {@link UpstreamCardError} naming the field
 * of the extended card that cannot be hosted.
 */
export function withExtendedCard(
  definition: AgentCardDefinition,
  extendedJson: unknown,
): AgentCardDefinition {
  const parsed = extendedCardSchema.safeParse(extendedJson);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path.join('.') || 'card';
    throw new UpstreamCardError(
      `the extended card is not an A2A agent card: ${field}: ${issue?.message ?? ''}`,
      `extendedCard.${field}`,
    );
  }
  const description = parsed.data.description.trim();
  return extended(definition, {
    ...(description !== '' && description !== definition.description ? { description } : {}),
    skills: parsed.data.skills.map(hostedSkill),
  });
}

/**
 * The definition with the extended part of `previous` (the agent's definition before), when it had one: what
 * an import or sync keeps when the upstream declares an extended card that cannot be read this time.
 */
export function withKeptExtendedCard(
  definition: AgentCardDefinition,
  previous: AgentCardDefinition | undefined,
): AgentCardDefinition {
  return previous?.extendedAgentCard === true && previous.extendedCard
    ? extended(definition, previous.extendedCard)
    : definition;
}

function extended(definition: AgentCardDefinition, part: ExtendedPart): AgentCardDefinition {
  const listed = new Set((definition.skills ?? []).map((skill) => skill.id));
  const result = agentCardDefinitionSchema.safeParse({
    ...definition,
    extendedAgentCard: true,
    extendedCard: {
      ...(part.description !== undefined ? { description: part.description } : {}),
      skills: (part.skills ?? []).filter((skill) => !listed.has(skill.id)),
    },
  });
  if (!result.success) {
    const issue = result.error.issues[0];
    const field = issue?.path.join('.') || 'card';
    throw new UpstreamCardError(
      `the extended card cannot be hosted: ${field}: ${issue?.message ?? ''}`,
      field,
    );
  }
  return result.data;
}

/** An upstream skill as the platform's card shows it: a description is required (the name stands in). */
function hostedSkill(skill: z.infer<typeof upstreamSkill>): HostedSkill {
  return {
    id: skill.id,
    name: skill.name,
    description: skill.description?.trim() || skill.name,
    tags: skill.tags,
    examples: skill.examples,
    ...(skill.inputModes?.length ? { inputModes: skill.inputModes } : {}),
    ...(skill.outputModes?.length ? { outputModes: skill.outputModes } : {}),
  };
}

function orDefault(modes: string[]): string[] {
  return modes.length > 0 ? modes : ['text/plain'];
}
