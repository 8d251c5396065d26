import { z } from 'zod';

/** A media type of an input or output mode, e.g. `text/plain` or `application/json`. */
const mediaType = z
  .string()
  .regex(/^[\w.+-]+\/[\w.+*-]+$/, 'must be a media type such as text/plain')
  .max(255);
const text = (max: number) => z.string().trim().min(1).max(max);
const httpsUrl = z
  .string()
  .url()
  .max(2_048)
  .refine((url) => /^https?:\/\//.test(url), 'must be an http(s) URL');

const skillSchema = z
  .object({
    id: text(128),
    name: text(256),
    description: text(4_096),
    tags: z.array(text(64)).max(32),
    examples: z.array(text(1_024)).max(32).default([]),
    inputModes: z.array(mediaType).max(32).optional(),
    outputModes: z.array(mediaType).max(32).optional(),
  })
  .strict();

const extensionSchema = z
  .object({
    uri: httpsUrl,
    description: z.string().max(4_096).optional(),
    required: z.boolean().optional(),
    params: z.record(z.unknown()).optional(),
  })
  .strict();

/**
 * The card definition of a hosted agent (spec digest §4.5): the fields the agent contributes. The platform
 * adds its interfaces, provider, streaming and the security schemes it enforces (ARCHITECTURE.md "Agent
 * cards"). Stored as `ops.agents.profile`.
 */
export const agentCardDefinitionSchema = z
  .object({
    name: text(256),
    description: text(4_096),
    version: text(64),
    defaultInputModes: z.array(mediaType).min(1).max(32).default(['text/plain']),
    defaultOutputModes: z.array(mediaType).min(1).max(32).default(['text/plain']),
    skills: z.array(skillSchema).max(128).default([]),
    documentationUrl: httpsUrl.optional(),
    iconUrl: httpsUrl.optional(),
    extensions: z.array(extensionSchema).max(32).optional(),
    /** `capabilities.pushNotifications`: the push-config operations and inline webhooks. */
    pushNotifications: z.boolean().optional(),
    /** `capabilities.extendedAgentCard`, and what authenticated callers see in addition. */
    extendedAgentCard: z.boolean().optional(),
    extendedCard: z
      .object({
        description: text(4_096).optional(),
        skills: z.array(skillSchema).max(128).optional(),
      })
      .strict()
      .optional(),
    /** The agent may answer a new message with a bare Message (docs/adr/0009-message-replies.md). */
    messageReplies: z.boolean().optional(),
    /**
     * The agent renders with A2UI (docs/a2ui.md): the card declares the A2UI extension, v0.9 and v0.9.1, with
     * the v0.9 basic catalog. An entry of `extensions` with the same URI takes its place.
     */
    a2ui: z.boolean().optional(),
  })
  .strict();

/** How the task-service leases the agent's tasks to its workers; null fields take the platform default. */
export const workerPolicySchema = z
  .object({
    /** What happens to a task whose worker lost its lease. */
    onLeaseLost: z.enum(['redispatch', 'fail']).default('redispatch'),
    /** Leases of one task before it fails (with `redispatch`). */
    maxAttempts: z.number().int().min(1).max(100).default(3),
    /** A lease's time to live (LEASE_TTL_MS when null). */
    leaseTtlMs: z.number().int().min(1_000).max(3_600_000).nullable().default(null),
    /** Tasks of the agent leased at once across all its workers (unbounded when null). */
    maxConcurrency: z.number().int().min(1).max(100_000).nullable().default(null),
  })
  .strict();

/** What an operator defines for an agent: its card and its worker policy. */
export const agentDefinitionSchema = z
  .object({ card: agentCardDefinitionSchema, policy: workerPolicySchema.default({}) })
  .strict();

export type AgentCardDefinition = z.infer<typeof agentCardDefinitionSchema>;
export type WorkerPolicy = z.infer<typeof workerPolicySchema>;
export type AgentDefinition = z.infer<typeof agentDefinitionSchema>;
/** An agent definition as a request gives it: defaults not yet applied. */
export type AgentDefinitionInput = z.input<typeof agentDefinitionSchema>;
