// Type aliases rather than interfaces, so that a profile is also a plain `JsonObject` (stored as JSONB).

/** An `AgentSkill` of the card (ProtoJSON shape). */
export type AgentProfileSkill = {
  id: string;
  name: string;
  description: string;
  tags: string[];
  examples: string[];
};

/** The card fields an agent contributes (ProtoJSON shape); the platform adds interfaces and security. */
export type AgentProfile = {
  name: string;
  description: string;
  version: string;
  defaultInputModes: string[];
  defaultOutputModes: string[];
  skills: AgentProfileSkill[];
  /** Declares `capabilities.extendedAgentCard`: GetExtendedAgentCard serves authenticated callers. */
  extendedAgentCard?: boolean;
  /** What the extended card changes: its description and the skills it adds to the public ones. */
  extendedCard?: { description?: string; skills?: AgentProfileSkill[] };
  /**
   * The agent may answer a new message with a bare Message (`ExecutionEventBus.reply`) instead of a task
   * (docs/adr/0009-message-replies.md). Not a card field: the platform then waits for the agent's first
   * answer before it shows the client a task, even with `returnImmediately`.
   */
  messageReplies?: boolean;
  /**
   * Declares `capabilities.pushNotifications`: clients may register webhooks for the agent's tasks, and the
   * platform delivers every event of those tasks to them (docs/push.md).
   */
  pushNotifications?: boolean;
  /** Declares the A2UI extension (v0.9 and v0.9.1, basic catalog) on the card (docs/a2ui.md). */
  a2ui?: boolean;
};

/** The ids of the example agents in `apps/agents`. */
export type ExampleAgentId = 'echo' | 'interview' | 'countdown' | 'tck' | 'units' | 'expense';

/** The example agents' profiles: the platform seeds them into its registry and builds their cards. */
export const AGENT_PROFILES: Readonly<Record<ExampleAgentId, AgentProfile>> = {
  echo: {
    name: 'Echo',
    description: 'Answers every message with an artifact holding the text it was sent.',
    version: '1.0.0',
    pushNotifications: true,
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [
      {
        id: 'echo',
        name: 'Echo',
        description:
          "Returns the message's text parts, joined by newlines, as the artifact 'echo'.",
        tags: ['example', 'echo', 'test'],
        examples: ['hello', 'Say this back to me'],
      },
    ],
    extendedAgentCard: true,
    extendedCard: {
      skills: [
        {
          id: 'echo-stream',
          name: 'Streamed echo',
          description:
            'SendStreamingMessage follows the echo as it happens: the task, its WORKING status, the ' +
            "artifact 'echo' and the COMPLETED status. Only callers with an API key see this skill.",
          tags: ['example', 'echo', 'streaming'],
          examples: ['hello, as a stream'],
        },
      ],
    },
  },
  interview: {
    name: 'Interview',
    description: 'Asks for your name (the task waits for input), then greets you.',
    version: '1.0.0',
    pushNotifications: true,
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [
      {
        id: 'greet',
        name: 'Greet',
        description:
          "Moves the task to TASK_STATE_INPUT_REQUIRED with the question 'What is your name?'; answering " +
          "with a message on the same task completes it with the artifact 'greeting'.",
        tags: ['example', 'multi-turn', 'input-required'],
        examples: ['Hi there', 'Ada Lovelace'],
      },
    ],
  },
  countdown: {
    name: 'Countdown',
    description:
      'Counts down slowly from N, reporting progress and streaming the count as an artifact; cancellable.',
    version: '1.0.0',
    pushNotifications: true,
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [
      {
        id: 'countdown',
        name: 'Countdown',
        description:
          'Counts down from the first integer in the message (default 5, 1–100), one step per second, with a ' +
          "WORKING status 'step i/N' per step and the artifact 'countdown' streamed in chunks. The message " +
          'metadata {"stepMs": 10–10000} changes the step delay.',
        tags: ['example', 'streaming', 'long-running', 'cancel'],
        examples: ['10', 'count down from 3'],
      },
    ],
  },
  tck: {
    name: 'TCK',
    description:
      'The system under test for the A2A TCK (a2aproject/a2a-tck): plays the scenario named by the prefix of ' +
      "the message's messageId and echoes any other message.",
    version: '1.0.0',
    pushNotifications: true,
    defaultInputModes: ['text/plain', 'application/json'],
    defaultOutputModes: ['text/plain', 'application/json'],
    skills: [
      {
        id: 'tck-tasks',
        name: 'Task outcomes',
        description:
          "messageId prefix 'tck-complete-task' completes with the message 'Hello from TCK', " +
          "'tck-input-required' stops in TASK_STATE_INPUT_REQUIRED (answer on the same task with another prefix) " +
          "and 'tck-reject-task' ends in TASK_STATE_REJECTED.",
        tags: ['tck', 'conformance', 'multi-turn', 'input-required'],
        examples: ['messageId tck-complete-task-1', 'messageId tck-input-required-1'],
      },
      {
        id: 'tck-message-response',
        name: 'Direct message',
        description:
          "messageId prefix 'tck-message-response' is answered with the bare Message 'Direct message " +
          "response': no task is created (SendMessage returns a message; a stream carries that one message).",
        tags: ['tck', 'conformance', 'message'],
        examples: ['messageId tck-message-response-1'],
      },
      {
        id: 'tck-artifacts',
        name: 'Artifacts',
        description:
          "messageId prefixes 'tck-artifact-text', 'tck-artifact-file' (inline bytes), 'tck-artifact-file-url' " +
          "and 'tck-artifact-data' complete the task with one artifact holding a text, file, file URL or data part.",
        tags: ['tck', 'conformance', 'artifacts'],
        examples: ['messageId tck-artifact-data-1'],
      },
      {
        id: 'tck-streaming',
        name: 'Streaming',
        description:
          "messageId prefixes 'tck-stream-001', 'tck-stream-003', 'tck-stream-ordering-001', " +
          "'tck-stream-artifact-text' and 'tck-stream-artifact-file' report WORKING, one artifact, then COMPLETED; " +
          "'tck-stream-002' only completes; 'tck-stream-artifact-chunked' streams one artifact in two chunks; " +
          "'test-resubscribe-message-id' stays WORKING for 4 s (cancellable) before it completes.",
        tags: ['tck', 'conformance', 'streaming', 'cancel'],
        examples: [
          'messageId tck-stream-artifact-chunked-1',
          'messageId test-resubscribe-message-id-1',
        ],
      },
      {
        id: 'echo',
        name: 'Echo',
        description:
          "Any other message: its text parts come back as the artifact 'echo' and the task completes.",
        tags: ['tck', 'echo'],
        examples: ['hello'],
      },
    ],
    // The direct-message scenario answers with a bare Message.
    messageReplies: true,
    // Declared so that a conformance run exercises GetExtendedAgentCard too: anonymous callers (the TCK
    // sends no credentials) get UNAUTHENTICATED, callers with an API key this card.
    extendedAgentCard: true,
    extendedCard: {
      description:
        'The system under test for the A2A TCK, as an authenticated caller sees it: the public skills and ' +
        'the tenant it runs in.',
      skills: [
        {
          id: 'tck-authenticated',
          name: 'Authenticated caller',
          description:
            'Shown only on the extended card, to callers that sent a valid API key: the same scenarios as ' +
            'the public skills, run as that caller (its tasks are its own).',
          tags: ['tck', 'conformance', 'extended-card'],
          examples: ['messageId tck-complete-task-1, with an API key'],
        },
      ],
    },
  },
  units: {
    name: 'Units',
    description:
      'Converts lengths, masses and temperatures: a single value is answered with a message, a table ' +
      'becomes a task with a CSV artifact.',
    version: '1.0.0',
    pushNotifications: true,
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain', 'text/csv', 'application/json'],
    skills: [
      {
        id: 'convert',
        name: 'Convert a value',
        description:
          "'convert 10 km to mi', '10 kg in lb' or '100 c to f' is answered with the bare Message " +
          "'10 km = 6.2137 mi' (no task is created); on an existing task the same text completes it. Units: " +
          'km, m, cm, mi, ft, in; kg, g, lb, oz; c, f, k. A message it cannot read is answered with a short ' +
          'help (on an existing task: TASK_STATE_INPUT_REQUIRED, so the next message is read afresh).',
        tags: ['example', 'message', 'units'],
        examples: ['convert 10 km to mi', '10 kg in lb', '100 c to f'],
      },
      {
        id: 'table',
        name: 'Conversion table',
        description:
          "'table km to mi 1..100' or 'table 1-20 kg to lb', optionally with 'step 5', creates a task: " +
          "WORKING, the artifact 'units-table' (a text/csv part with a header and one row per value, at " +
          'most 1000 rows, and the same rows as a data part), then COMPLETED.',
        tags: ['example', 'artifacts', 'csv', 'units'],
        examples: ['table km to mi 1..100', 'table 1-20 kg to lb', 'table c to f -40..100 step 10'],
      },
    ],
    messageReplies: true,
  },
  expense: {
    name: 'Expenses',
    description:
      'Collects an expense claim with a form (A2UI when the client activates it, text otherwise), checks it ' +
      'and files it.',
    version: '1.0.0',
    pushNotifications: true,
    a2ui: true,
    defaultInputModes: [
      'text/plain',
      'application/json',
      'application/json+a2ui',
      'application/a2ui+json',
    ],
    defaultOutputModes: [
      'text/plain',
      'application/json',
      'application/json+a2ui',
      'application/a2ui+json',
    ],
    skills: [
      {
        id: 'file-expense',
        name: 'File an expense',
        description:
          'Any message opens the form: TASK_STATE_INPUT_REQUIRED with the A2UI surface expense-form-<taskId> ' +
          "(description, amount, currency, date, category; the button's action is 'submit_expense'). Invalid " +
          'fields come back as a data-model update of the form (errors under each field) and the task stays ' +
          "INPUT_REQUIRED; a valid claim completes it with the artifact 'expense' (a summary text, the values as " +
          'JSON and, for A2UI, a summary card). Without A2UI, answer with "field: value" lines or a JSON DataPart.',
        tags: ['example', 'a2ui', 'form', 'multi-turn', 'input-required'],
        examples: [
          'File an expense',
          'description: Taxi to the airport\namount: 42.50\ncurrency: EUR\ndate: 2026-11-30\ncategory: travel',
        ],
      },
    ],
  },
};

/** Every example agent, in the order the platform starts them (`npm start`, the test platforms). */
export const EXAMPLE_AGENT_IDS = Object.keys(AGENT_PROFILES) as readonly ExampleAgentId[];
