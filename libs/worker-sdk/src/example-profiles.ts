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
};

/** The ids of the example agents in `apps/agents`. */
export type ExampleAgentId = 'echo' | 'interview' | 'countdown';

/** The example agents' profiles: the platform seeds them into its registry and builds their cards. */
export const AGENT_PROFILES: Readonly<Record<ExampleAgentId, AgentProfile>> = {
  echo: {
    name: 'Echo',
    description: 'Answers every message with an artifact holding the text it was sent.',
    version: '1.0.0',
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
  },
  interview: {
    name: 'Interview',
    description: 'Asks for your name (the task waits for input), then greets you.',
    version: '1.0.0',
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
};
