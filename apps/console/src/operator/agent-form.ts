import { html, nothing, type TemplateResult } from 'lit';
import { fieldText } from '../shared/session';
import type { Agent, AgentCard, AgentDefinition, Skill, WorkerPolicy } from './types';

const list = (values: readonly string[] | undefined): string => (values ?? []).join(', ');

const splitList = (text: string): string[] =>
  text
    .split(',')
    .map((value) => value.trim())
    .filter((value) => value !== '');

/**
 * The form that defines an agent: the card fields operators edit most, its skills as JSON, and the worker
 * policy. Editing keeps the card's other fields (extensions, the extended card, …) as they are.
 */
export function agentForm(
  agent: Agent | null,
  submit: (event: SubmitEvent) => void,
): TemplateResult {
  const card = agent?.card;
  const policy = agent?.policy ?? {};
  return html`<form class="panel" @submit=${submit}>
    <h2>${agent ? `Edit ${agent.agentId}` : 'Define an agent'}</h2>
    <div class="row">
      ${agent
        ? nothing
        : html`<div>
            <label for="agentId">Agent id</label>
            <input id="agentId" name="agentId" required pattern="[^\\/\\s]{1,128}" />
          </div>`}
      <div>
        <label for="name">Name</label>
        <input id="name" name="name" required .value=${card?.name ?? ''} />
      </div>
      <div>
        <label for="version">Version</label>
        <input id="version" name="version" required .value=${card?.version ?? '1.0.0'} />
      </div>
    </div>
    <label for="description">Description</label>
    <textarea
      id="description"
      name="description"
      required
      class="short"
      .value=${card?.description ?? ''}
    ></textarea>
    <div class="row">
      <div>
        <label for="inputModes">Input media types (comma separated)</label>
        <input
          id="inputModes"
          name="inputModes"
          size="30"
          .value=${list(card?.defaultInputModes ?? ['text/plain'])}
        />
      </div>
      <div>
        <label for="outputModes">Output media types (comma separated)</label>
        <input
          id="outputModes"
          name="outputModes"
          size="30"
          .value=${list(card?.defaultOutputModes ?? ['text/plain'])}
        />
      </div>
    </div>
    <fieldset>
      <legend>Capabilities</legend>
      <label
        ><input
          type="checkbox"
          name="pushNotifications"
          .checked=${card?.pushNotifications ?? true}
        />Push notifications (webhooks)</label
      >
    </fieldset>
    <label for="skills">Skills (JSON array of {id, name, description, tags})</label>
    <textarea
      id="skills"
      name="skills"
      spellcheck="false"
      .value=${JSON.stringify(card?.skills ?? [], null, 2)}
    ></textarea>
    <fieldset>
      <legend>Worker policy</legend>
      <div class="row">
        <div>
          <label for="onLeaseLost">On a lost lease</label>
          <select id="onLeaseLost" name="onLeaseLost">
            ${(['redispatch', 'fail'] as const).map(
              (value) =>
                html`<option
                  value=${value}
                  ?selected=${(policy.onLeaseLost ?? 'redispatch') === value}
                >
                  ${value}
                </option>`,
            )}
          </select>
        </div>
        <div>
          <label for="maxAttempts">Most attempts (1–100)</label>
          <input
            id="maxAttempts"
            name="maxAttempts"
            type="number"
            min="1"
            max="100"
            .value=${String(policy.maxAttempts ?? 3)}
          />
        </div>
        <div>
          <label for="leaseTtlMs">Lease TTL in ms (empty: default)</label>
          <input
            id="leaseTtlMs"
            name="leaseTtlMs"
            type="number"
            min="1000"
            max="3600000"
            .value=${String(policy.leaseTtlMs ?? '')}
          />
        </div>
        <div>
          <label for="maxConcurrency">Most tasks leased at once (empty: no cap)</label>
          <input
            id="maxConcurrency"
            name="maxConcurrency"
            type="number"
            min="1"
            .value=${String(policy.maxConcurrency ?? '')}
          />
        </div>
      </div>
    </fieldset>
    <button type="submit">${agent ? 'Save agent' : 'Create agent'}</button>
  </form>`;
}

/** The agent id and definition the form holds; throws on skills that are not a JSON array. */
export function readAgentForm(
  form: HTMLFormElement,
  existing: Agent | null,
): { agentId: string; definition: AgentDefinition } {
  let skills: unknown;
  try {
    skills = JSON.parse(fieldText(form, 'skills') || '[]');
  } catch (error) {
    throw new Error(
      `Skills are not JSON: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  if (!Array.isArray(skills)) {
    throw new Error('Skills must be a JSON array.');
  }
  const number = (name: string): number | null => {
    const text = fieldText(form, name);
    return text === '' ? null : Number(text);
  };
  const card: AgentCard = {
    ...existing?.card,
    name: fieldText(form, 'name'),
    description: fieldText(form, 'description'),
    version: fieldText(form, 'version'),
    defaultInputModes: splitList(fieldText(form, 'inputModes')),
    defaultOutputModes: splitList(fieldText(form, 'outputModes')),
    skills: skills as Skill[],
    pushNotifications: new FormData(form).get('pushNotifications') !== null,
  };
  const policy: WorkerPolicy = {
    onLeaseLost: fieldText(form, 'onLeaseLost') === 'fail' ? 'fail' : 'redispatch',
    maxAttempts: number('maxAttempts') ?? 3,
    leaseTtlMs: number('leaseTtlMs'),
    maxConcurrency: number('maxConcurrency'),
  };
  return { agentId: existing?.agentId ?? fieldText(form, 'agentId'), definition: { card, policy } };
}
