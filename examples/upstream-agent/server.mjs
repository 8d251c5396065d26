#!/usr/bin/env node
// An existing A2A v1.0 agent, built with the official @a2a-js/sdk and nothing of this platform: the
// "upstream" the platform imports and proxies (npm start, end-to-end tests).
//
//   node examples/upstream-agent/server.mjs
//
// Plain Node ESM, no build step; the SDK, express and @grpc/grpc-js come from the repository's
// node_modules. It serves the agent card at /.well-known/agent-card.json, JSON-RPC at /a2a/jsonrpc and
// HTTP+JSON at /a2a/rest on the HTTP port, and gRPC on its own port. Environment (all optional):
//   UPSTREAM_HOST          address to listen on and to put in the card   (default 127.0.0.1)
//   UPSTREAM_HTTP_PORT     JSON-RPC, HTTP+JSON and the card; 0 = any free (default 41301)
//   UPSTREAM_GRPC_PORT     gRPC; 0 = no gRPC                             (default 41302)
//   UPSTREAM_NO_GRPC       1 = no gRPC
//   UPSTREAM_NAME          the card's name                               (default Upstream example)
//   UPSTREAM_BEARER_TOKEN  every A2A call must carry `Authorization: Bearer <token>` (the card stays public)
//   UPSTREAM_STREAMING     false = the card declares no streaming        (default true)
//   UPSTREAM_EXTENDED_SKILL  a skill id: the card declares an extended card (GetExtendedAgentCard) that
//                          lists one more skill of this id; needs UPSTREAM_BEARER_TOKEN (it requires auth)
//
// The first word of the message picks the behaviour: echo, ask, chunks, reply, slow, fail (README.md).
/* global console, setTimeout, Buffer */
import {
  AGENT_CARD_PATH,
  AgentCard,
  Message,
  Task,
  TaskArtifactUpdateEvent,
  TaskState,
  TaskStatusUpdateEvent,
} from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import {
  agentCardHandler,
  jsonRpcHandler,
  restHandler,
  UserBuilder,
} from '@a2a-js/sdk/server/express';
import { A2AService, grpcService } from '@a2a-js/sdk/server/grpc';
import {
  ResponderBuilder,
  Server,
  ServerCredentials,
  ServerInterceptingCall,
  ServerListenerBuilder,
  status,
} from '@grpc/grpc-js';
import express from 'express';
import { randomUUID, timingSafeEqual } from 'node:crypto';
import process, { env } from 'node:process';

const host = env['UPSTREAM_HOST'] || '127.0.0.1';
const httpPort = Number(env['UPSTREAM_HTTP_PORT'] ?? 41301);
const grpcPort = env['UPSTREAM_NO_GRPC'] === '1' ? 0 : Number(env['UPSTREAM_GRPC_PORT'] ?? 41302);
const name = env['UPSTREAM_NAME'] || 'Upstream example';
const bearerToken = env['UPSTREAM_BEARER_TOKEN'] || '';
const streaming = env['UPSTREAM_STREAMING'] !== 'false';
const extendedSkill = env['UPSTREAM_EXTENDED_SKILL'] || '';
if (extendedSkill && !bearerToken) {
  console.error(
    'UPSTREAM_EXTENDED_SKILL needs UPSTREAM_BEARER_TOKEN: the extended card requires auth',
  );
  process.exit(2);
}

const FINAL_STATES = new Set(['TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED']);

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Messages and events are written in their ProtoJSON form, as on the wire, and converted with the SDK's
// codecs (Message.fromJSON, ...), which fill in every field left out.
const agentMessage = (text, ids) =>
  Message.fromJSON({
    messageId: randomUUID(),
    role: 'ROLE_AGENT',
    parts: [{ text, mediaType: 'text/plain' }],
    ...ids,
  });

/** The text of the message's first text part. */
function textOf(message) {
  const part = message.parts.find((p) => p.content?.$case === 'text');
  return part ? part.content.value.trim() : '';
}

/**
 * One turn of a task: publishes its events on the task's bus. The SDK wants every turn, follow-ups included,
 * to start with the task itself, so the constructor publishes it (the stored task on a follow-up).
 */
class TaskTurn {
  canceled = false;

  constructor(ctx, bus, onEnd) {
    this.ids = { taskId: ctx.taskId, contextId: ctx.contextId };
    this.bus = bus;
    this.onEnd = onEnd;
    const created = Task.fromJSON({
      id: ctx.taskId,
      contextId: ctx.contextId,
      status: { state: 'TASK_STATE_SUBMITTED', timestamp: new Date().toISOString() },
    });
    bus.publish(AgentEvent.task(ctx.task ?? { ...created, history: [ctx.userMessage] }));
  }

  /**
   * @param {string} state e.g. 'TASK_STATE_WORKING'
   * @param {string} [text] the status message
   */
  status(state, text) {
    this.bus.publish(
      AgentEvent.statusUpdate(
        TaskStatusUpdateEvent.fromJSON({
          ...this.ids,
          status: {
            state,
            timestamp: new Date().toISOString(),
            ...(text === undefined
              ? {}
              : { message: Message.toJSON(agentMessage(text, this.ids)) }),
          },
        }),
      ),
    );
    if (FINAL_STATES.has(state)) {
      this.onEnd();
    }
  }

  artifact(name, text, { artifactId = randomUUID(), append = false, lastChunk = true } = {}) {
    this.bus.publish(
      AgentEvent.artifactUpdate(
        TaskArtifactUpdateEvent.fromJSON({
          ...this.ids,
          artifact: { artifactId, name, parts: [{ text, mediaType: 'text/plain' }] },
          append,
          lastChunk,
        }),
      ),
    );
  }

  cancel() {
    this.canceled = true;
    this.status('TASK_STATE_CANCELED');
  }
}

class UpstreamExecutor {
  /** The turns of tasks not yet in a final state (running, or waiting for input), for cancelTask. */
  #open = new Map();

  async execute(ctx, bus) {
    const text = textOf(ctx.userMessage);
    const [, word = '', rest = ''] = /^(\S*)\s*([\s\S]*)$/.exec(text) ?? [];
    const command = word.toLowerCase();

    // A message on a task that asked a question is the answer, whatever its first word is: the SDK loaded
    // that task (ctx.task, its history already holding this message) from the taskId the message carries.
    const answering = ctx.task?.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED;

    if (command === 'reply' && !answering) {
      // A bare Message as the first (and only) event: the SDK answers with it and creates no task.
      bus.publish(AgentEvent.message(agentMessage(`reply: ${rest}`, { contextId: ctx.contextId })));
      return;
    }

    const turn = new TaskTurn(ctx, bus, () => this.#open.delete(ctx.taskId));
    this.#open.set(ctx.taskId, turn);

    if (answering) {
      turn.status('TASK_STATE_WORKING');
      turn.artifact('greeting', `Hello, ${text}!`);
      turn.status('TASK_STATE_COMPLETED');
      return;
    }

    // A canceled turn stops publishing: cancelTask has already published its final state.
    switch (command) {
      case 'ask':
        turn.status('TASK_STATE_INPUT_REQUIRED', 'What is your name?');
        return;
      case 'chunks': {
        const count = Math.max(1, Number.parseInt(rest, 10) || 3);
        const artifactId = randomUUID();
        turn.status('TASK_STATE_WORKING');
        for (let i = 1; i <= count; i++) {
          if (i > 1) {
            await sleep(50);
            if (turn.canceled) {
              return;
            }
          }
          turn.artifact('chunks', `chunk ${i}`, {
            artifactId,
            append: i > 1,
            lastChunk: i === count,
          });
        }
        break;
      }
      case 'slow': {
        const deadline = Date.now() + (Number(rest) || 30) * 1000;
        turn.status('TASK_STATE_WORKING');
        while (Date.now() < deadline && !turn.canceled) {
          await sleep(Math.min(100, deadline - Date.now()));
        }
        if (turn.canceled) {
          return;
        }
        turn.artifact('slow', 'done');
        break;
      }
      case 'fail':
        turn.status('TASK_STATE_FAILED', rest);
        return;
      default:
        turn.status('TASK_STATE_WORKING');
        turn.artifact('echo', `echo: ${command === 'echo' ? rest : text}`);
    }
    turn.status('TASK_STATE_COMPLETED');
  }

  async cancelTask(taskId) {
    // The turn publishes CANCELED on the task's bus, which is the bus the SDK hands in here.
    this.#open.get(taskId)?.cancel();
  }
}

/** Whether an Authorization header value carries the configured bearer token (constant-time compare). */
function authorized(header) {
  const given = Buffer.from(/^Bearer\s+(.*)$/i.exec(String(header ?? ''))?.[1] ?? '');
  const expected = Buffer.from(bearerToken);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

const requireBearer = (req, res, next) => {
  if (authorized(req.get('authorization'))) {
    next();
    return;
  }
  res.status(401).set('WWW-Authenticate', 'Bearer');
  res.json({ error: { code: 401, status: 'UNAUTHENTICATED', message: 'Bearer token required.' } });
};

/** The gRPC counterpart of requireBearer: refuses the call from its metadata, before any handler runs. */
const requireBearerGrpc = (_method, call) =>
  new ServerInterceptingCall(
    call,
    new ResponderBuilder()
      .withStart((next) =>
        next(
          new ServerListenerBuilder()
            .withOnReceiveMetadata((metadata, nextMetadata) => {
              if (authorized(metadata.get('authorization')[0])) {
                nextMetadata(metadata);
              } else {
                call.sendStatus({
                  code: status.UNAUTHENTICATED,
                  details: 'Bearer token required.',
                });
              }
            })
            .build(),
        ),
      )
      .build(),
  );

// Listen before building the card: with UPSTREAM_HTTP_PORT=0 only the bound server knows the port it names.
const app = express();
const httpServer = await new Promise((resolve, reject) => {
  const server = app.listen(httpPort, host, (error) => (error ? reject(error) : resolve(server)));
});
const httpBase = `http://${host}:${httpServer.address().port}`;

const skill = (id, description, example) => ({
  id,
  name: id,
  description,
  tags: [id],
  examples: [example],
});
const cardJson = {
  name,
  description:
    'Example A2A agent: echoes, asks a question, streams chunks, replies, works slowly or fails.',
  version: '1.0.0',
  supportedInterfaces: [
    { url: `${httpBase}/a2a/jsonrpc`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
    { url: `${httpBase}/a2a/rest`, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
    // gRPC targets are host:port, with no scheme.
    ...(grpcPort
      ? [{ url: `${host}:${grpcPort}`, protocolBinding: 'GRPC', protocolVersion: '1.0' }]
      : []),
  ],
  capabilities: { streaming, pushNotifications: false, extendedAgentCard: Boolean(extendedSkill) },
  ...(bearerToken && {
    securitySchemes: { bearer: { httpAuthSecurityScheme: { scheme: 'Bearer' } } },
    securityRequirements: [{ schemes: { bearer: { list: [] } } }],
  }),
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [
    skill(
      'echo',
      'Answers `echo <text>` (or any other message) with an artifact `echo: <text>`.',
      'echo hello',
    ),
    skill('ask', 'Asks for your name (input required), then greets you on the same task.', 'ask'),
    skill('chunks', 'Streams one artifact in n chunks (default 3).', 'chunks 3'),
    skill('reply', 'Answers with a bare message, no task.', 'reply hello'),
    skill('slow', 'Works for the given seconds (default 30); cancelable.', 'slow 5'),
    skill(
      'fail',
      'Fails the task with the given text as the status message.',
      'fail out of coffee',
    ),
  ],
};
const card = AgentCard.fromJSON(cardJson);
// The extended card: the public one with one more skill and its own description. Only callers with the
// bearer token reach GetExtendedAgentCard (every A2A route requires it), so the provider answers it as is.
const extendedCard =
  extendedSkill &&
  AgentCard.fromJSON({
    ...cardJson,
    description: `${cardJson.description} Callers with the token also get ${extendedSkill}.`,
    skills: [
      ...cardJson.skills,
      skill(
        extendedSkill,
        'Listed only in the extended card; answered like echo.',
        `${extendedSkill} hello`,
      ),
    ],
  });

const requestHandler = new DefaultRequestHandler(
  card,
  new InMemoryTaskStore(),
  new UpstreamExecutor(),
  undefined,
  undefined,
  undefined,
  extendedCard ? async () => extendedCard : undefined,
);
const guard = bearerToken ? [requireBearer] : [];
const userBuilder = UserBuilder.noAuthentication;
app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: requestHandler }));
app.use('/a2a/jsonrpc', ...guard, jsonRpcHandler({ requestHandler, userBuilder }));
app.use('/a2a/rest', ...guard, restHandler({ requestHandler, userBuilder }));

let grpcServer;
if (grpcPort) {
  grpcServer = new Server({ interceptors: bearerToken ? [requireBearerGrpc] : [] });
  grpcServer.addService(A2AService, grpcService({ requestHandler, userBuilder }));
  await new Promise((resolve, reject) => {
    grpcServer.bindAsync(`${host}:${grpcPort}`, ServerCredentials.createInsecure(), (error) =>
      error ? reject(error) : resolve(),
    );
  });
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    grpcServer?.forceShutdown();
    httpServer.closeAllConnections();
    // Exit once the listener is closed, without waiting for `slow` tasks still sleeping.
    httpServer.close(() => process.exit(0));
  });
}

// Started by a supervisor with an IPC channel (npm start): its closing means the supervisor is gone.
if (process.send) {
  process.once('disconnect', () => process.exit(0));
}

console.log(`upstream agent ready http=${httpServer.address().port} grpc=${grpcPort || 'none'}`);
