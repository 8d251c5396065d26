import type { JsonObject, JsonValue, Message, Task } from '@lib/a2a-protocol';
import {
  A2UI_BASIC_CATALOG_ID,
  A2UI_EXTENSION_URIS,
  a2uiAgentMessage,
  a2uiPart,
  activatedA2uiVersion,
  createSurface,
  deleteSurface,
  isA2uiPart,
  readA2uiActions,
  readA2uiClientCapabilities,
  textPart,
  updateComponents,
  updateDataModel,
  type A2uiComponent,
  type A2uiServerMessage,
  type A2uiVersion,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
} from '@lib/worker-sdk';
import { joinedText } from './message-text';

export const EXPENSE_FIELDS = ['description', 'amount', 'currency', 'date', 'category'] as const;
export type ExpenseField = (typeof EXPENSE_FIELDS)[number];
export const CURRENCIES = ['EUR', 'USD', 'GBP'] as const;
export const CATEGORIES = ['travel', 'meals', 'lodging', 'supplies', 'other'] as const;
export const MAX_AMOUNT = 10_000;
/** The `action.event.name` of the form's submit button. */
export const SUBMIT_ACTION = 'submit_expense';

/** The fields as the user entered them so far (absent: not given yet). */
export type ExpenseDraft = Partial<Record<ExpenseField, string>>;
export type ExpenseErrors = Partial<Record<ExpenseField, string>>;

/** A valid expense claim. */
export type Expense = {
  description: string;
  amount: number;
  currency: (typeof CURRENCIES)[number];
  /** YYYY-MM-DD. */
  date: string;
  category: (typeof CATEGORIES)[number];
};

export const formSurfaceId = (taskId: string): string => `expense-form-${taskId}`;
export const summarySurfaceId = (taskId: string): string => `expense-summary-${taskId}`;

/** What a client without A2UI is asked for (and the text of the form's message for any client). */
export const FORM_TEXT =
  'Please fill in the expense claim. Without the form, reply with one line per field: ' +
  `"description: …", "amount: 42.50", "currency: ${CURRENCIES.join('|')}", "date: YYYY-MM-DD" and ` +
  `"category: ${CATEGORIES.join('|')}" (lines you leave out keep their earlier values).`;

function oneOf<T extends string>(values: readonly T[], value: string): value is T {
  return (values as readonly string[]).includes(value);
}

function isRealDate(date: string): boolean {
  const parsed = new Date(`${date}T00:00:00Z`);
  return !Number.isNaN(parsed.getTime()) && parsed.toISOString().startsWith(date);
}

/** Checks every field; `today` (YYYY-MM-DD) bounds the date. */
export function validateExpense(
  draft: ExpenseDraft,
  today: string,
): { ok: true; expense: Expense } | { ok: false; errors: ExpenseErrors } {
  const errors: ExpenseErrors = {};
  const description = (draft.description ?? '').trim();
  if (description.length < 3 || description.length > 200) {
    errors.description = 'Describe the expense in 3 to 200 characters.';
  }
  const amountText = (draft.amount ?? '').trim();
  const amount = Number(amountText);
  if (!/^\d+(\.\d{1,2})?$/.test(amountText)) {
    errors.amount = 'Enter an amount such as 42.50.';
  } else if (amount <= 0 || amount > MAX_AMOUNT) {
    errors.amount = `The amount must be more than 0 and at most ${MAX_AMOUNT}.`;
  }
  const currency = (draft.currency ?? '').trim().toUpperCase();
  if (!oneOf(CURRENCIES, currency)) {
    errors.currency = `Choose one of ${CURRENCIES.join(', ')}.`;
  }
  const date = (draft.date ?? '').trim().slice(0, 10);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(date) || !isRealDate(date)) {
    errors.date = 'Enter the date as YYYY-MM-DD.';
  } else if (date > today) {
    errors.date = 'The date cannot be in the future.';
  }
  const category = (draft.category ?? '').trim().toLowerCase();
  if (!oneOf(CATEGORIES, category)) {
    errors.category = `Choose one of ${CATEGORIES.join(', ')}.`;
  }
  return Object.keys(errors).length === 0 &&
    oneOf(CURRENCIES, currency) &&
    oneOf(CATEGORIES, category)
    ? { ok: true, expense: { description, amount, currency, date, category } }
    : { ok: false, errors };
}

/** A field's value as the user gave it: a picker's selection is a list (its first entry counts). */
function fieldText(value: JsonValue | undefined): string | undefined {
  const first = Array.isArray(value) ? value[0] : value;
  return typeof first === 'string' || typeof first === 'number' ? String(first).trim() : undefined;
}

function draftOf(values: JsonObject): ExpenseDraft {
  const draft: ExpenseDraft = {};
  for (const field of EXPENSE_FIELDS) {
    const value = fieldText(values[field]);
    if (value !== undefined) {
      draft[field] = value;
    }
  }
  return draft;
}

function isObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The fields one user message gives: the form's submit action (A2UI), a plain DataPart with the fields, or
 * `field: value` text lines.
 */
export function draftFromMessage(message: Message): ExpenseDraft {
  const submitted = readA2uiActions(message).findLast((a) => a.name === SUBMIT_ACTION);
  if (submitted) {
    return draftOf(submitted.context);
  }
  const data = message.parts.find((p) => isObject(p.data) && !isA2uiPart(p))?.data;
  if (isObject(data)) {
    return draftOf(data);
  }
  const draft: ExpenseDraft = {};
  for (const line of joinedText(message).split('\n')) {
    const match = /^\s*([a-z]+)\s*[:=]\s*(.*)$/i.exec(line);
    const field = match?.[1]?.toLowerCase() ?? '';
    if (match && oneOf(EXPENSE_FIELDS, field)) {
      draft[field] = (match[2] ?? '').trim();
    }
  }
  return draft;
}

function agentMessages(task: Task): Message[] {
  return [...(task.history ?? []), ...(task.status.message ? [task.status.message] : [])].filter(
    (m) => m.role === 'ROLE_AGENT',
  );
}

export type ExpenseStep =
  | { kind: 'form'; draft: ExpenseDraft; errors: ExpenseErrors; status: string }
  | { kind: 'filed'; expense: Expense };

/**
 * What to answer: the form (first, and while fields are missing or wrong, with the errors), or the filed
 * expense. The draft merges every user message of the task in order, so a text client may correct one line.
 */
export function nextExpenseStep(task: Task, userMessage: Message, today: string): ExpenseStep {
  const given = draftFromMessage(userMessage);
  const earlier = (task.history ?? []).filter(
    (m) => m.role === 'ROLE_USER' && m.messageId !== userMessage.messageId,
  );
  const draft = [...earlier.map(draftFromMessage), given].reduce<ExpenseDraft>(
    (merged, next) => ({ ...merged, ...next }),
    {},
  );
  if (Object.keys(given).length === 0) {
    const status =
      agentMessages(task).length === 0 ? '' : 'Fill in the form and press Submit expense.';
    return { kind: 'form', draft, errors: {}, status };
  }
  const checked = validateExpense(draft, today);
  if (!checked.ok) {
    const count = Object.keys(checked.errors).length;
    return {
      kind: 'form',
      draft,
      errors: checked.errors,
      status: `Please correct ${count === 1 ? 'the field' : `the ${count} fields`} marked below.`,
    };
  }
  return { kind: 'filed', expense: checked.expense };
}

const label = (name: string): string => `${name.charAt(0).toUpperCase()}${name.slice(1)}`;
const errorId = (field: ExpenseField): string => `${field}-error`;
const choices = (values: readonly string[]): JsonValue =>
  values.map((value) => ({ label: value, value }));

/** The form on the basic catalog: an input per field with its error line under it, and Submit. */
export function expenseFormComponents(today: string): A2uiComponent[] {
  const path = (field: ExpenseField): JsonObject => ({ path: `/expense/${field}` });
  const inputs: Record<ExpenseField, A2uiComponent> = {
    description: {
      id: 'description',
      component: 'TextField',
      label: 'Description',
      value: path('description'),
    },
    amount: {
      id: 'amount',
      component: 'TextField',
      label: 'Amount',
      value: path('amount'),
      variant: 'number',
    },
    currency: {
      id: 'currency',
      component: 'ChoicePicker',
      label: 'Currency',
      variant: 'mutuallyExclusive',
      options: choices(CURRENCIES),
      value: path('currency'),
    },
    date: {
      id: 'date',
      component: 'DateTimeInput',
      label: 'Date',
      value: path('date'),
      enableDate: true,
      max: today,
    },
    category: {
      id: 'category',
      component: 'ChoicePicker',
      label: 'Category',
      variant: 'mutuallyExclusive',
      options: choices(CATEGORIES),
      value: path('category'),
    },
  };
  return [
    {
      id: 'root',
      component: 'Column',
      children: ['title', 'status', ...EXPENSE_FIELDS.flatMap((f) => [f, errorId(f)]), 'submit'],
    },
    { id: 'title', component: 'Text', text: 'Expense claim', variant: 'h2' },
    { id: 'status', component: 'Text', text: { path: '/status' } },
    ...EXPENSE_FIELDS.flatMap((field): A2uiComponent[] => [
      inputs[field],
      {
        id: errorId(field),
        component: 'Text',
        text: { path: `/errors/${field}` },
        variant: 'caption',
      },
    ]),
    {
      id: 'submit',
      component: 'Button',
      child: 'submit-label',
      variant: 'primary',
      action: {
        event: {
          name: SUBMIT_ACTION,
          context: Object.fromEntries(EXPENSE_FIELDS.map((f) => [f, path(f)])),
        },
      },
    },
    { id: 'submit-label', component: 'Text', text: 'Submit expense' },
  ];
}

/** The form's data model: the draft (pickers hold lists), an error line per field and the status line. */
export function expenseFormModel(
  draft: ExpenseDraft,
  errors: ExpenseErrors,
  status: string,
): JsonObject {
  const pick = (value: string | undefined): string[] => (value ? [value] : []);
  return {
    expense: {
      description: draft.description ?? '',
      amount: draft.amount ?? '',
      currency: pick(draft.currency ?? CURRENCIES[0]),
      date: draft.date ?? '',
      category: pick(draft.category),
    },
    errors: Object.fromEntries(EXPENSE_FIELDS.map((f) => [f, errors[f] ?? ''])),
    status,
  };
}

export function expenseReference(taskId: string): string {
  return `EXP-${taskId.replace(/-/g, '').slice(0, 8).toUpperCase()}`;
}

export function expenseSummary(expense: Expense, reference: string): string {
  return (
    `Expense ${reference} filed: ${expense.description}, ${expense.amount.toFixed(2)} ` +
    `${expense.currency} on ${expense.date} (${expense.category}).`
  );
}

/** The summary card: a Card of label / value rows bound to its data model. */
export function summaryComponents(): A2uiComponent[] {
  const rows = ['reference', 'description', 'amount', 'date', 'category'];
  return [
    { id: 'root', component: 'Card', child: 'summary' },
    {
      id: 'summary',
      component: 'Column',
      children: ['summary-title', ...rows.map((r) => `row-${r}`)],
    },
    { id: 'summary-title', component: 'Text', text: 'Expense filed', variant: 'h3' },
    ...rows.flatMap((row): A2uiComponent[] => [
      { id: `row-${row}`, component: 'Row', children: [`label-${row}`, `value-${row}`] },
      { id: `label-${row}`, component: 'Text', text: label(row), variant: 'caption' },
      { id: `value-${row}`, component: 'Text', text: { path: `/${row}` } },
    ]),
  ];
}

export function summaryModel(expense: Expense, reference: string): JsonObject {
  return {
    reference,
    description: expense.description,
    amount: `${expense.amount.toFixed(2)} ${expense.currency}`,
    date: expense.date,
    category: expense.category,
  };
}

/**
 * The A2UI version to answer in: the one the request activated, unless the client's capabilities say it
 * cannot render the basic catalog. Null: text only.
 */
export function a2uiVersionFor(message: Message): A2uiVersion | null {
  const version = activatedA2uiVersion(message);
  const capabilities = readA2uiClientCapabilities(message);
  return capabilities && !capabilities.supportedCatalogIds.includes(A2UI_BASIC_CATALOG_ID)
    ? null
    : version;
}

function formText(step: Extract<ExpenseStep, { kind: 'form' }>): string {
  const problems = EXPENSE_FIELDS.flatMap((f) =>
    step.errors[f] ? [`- ${label(f)}: ${step.errors[f]}`] : [],
  );
  return problems.length > 0 ? [step.status, ...problems].join('\n') : FORM_TEXT;
}

/**
 * Agent `expense`: collects an expense claim through a form. A client that activated A2UI gets the form as
 * A2UI (basic catalog) in the INPUT_REQUIRED status message, and its errors as data-model updates of the same
 * surface; the filed expense is the artifact `expense` (text, a JSON DataPart and, for A2UI, a summary card).
 * Any other client gets the same as text and reads `field: value` lines or a JSON DataPart.
 */
export class ExpenseAgent implements AgentExecutor {
  constructor(private readonly today: () => string = () => new Date().toISOString().slice(0, 10)) {}

  async execute(context: RequestContext, events: ExecutionEventBus): Promise<void> {
    const { task, userMessage, taskId, contextId } = context;
    const today = this.today();
    const step = nextExpenseStep(task, userMessage, today);
    const version = a2uiVersionFor(userMessage);
    const formId = formSurfaceId(taskId);
    const formShown = agentMessages(task).some((m) => m.parts.some(isA2uiPart));
    const scope = { taskId, contextId };
    if (step.kind === 'form') {
      if (version === null) {
        await events.status('TASK_STATE_INPUT_REQUIRED', formText(step));
        return;
      }
      const messages: A2uiServerMessage[] = [
        ...(formShown
          ? []
          : [createSurface(formId), updateComponents(formId, expenseFormComponents(today))]),
        updateDataModel(formId, { value: expenseFormModel(step.draft, step.errors, step.status) }),
      ];
      await events.publish({
        kind: 'status',
        status: {
          state: 'TASK_STATE_INPUT_REQUIRED',
          message: a2uiAgentMessage(scope, version, formText(step), messages),
        },
      });
      return;
    }
    const reference = expenseReference(taskId);
    const summary = expenseSummary(step.expense, reference);
    const summaryId = summarySurfaceId(taskId);
    const card = [
      createSurface(summaryId),
      updateComponents(summaryId, summaryComponents()),
      updateDataModel(summaryId, { value: summaryModel(step.expense, reference) }),
    ];
    await Promise.all([
      events.artifact({
        artifactId: 'expense',
        name: 'expense',
        description: `Expense claim ${reference}`,
        parts: [
          textPart(summary),
          { data: { reference, ...step.expense }, mediaType: 'application/json' },
          ...(version === null ? [] : [a2uiPart(version, card)]),
        ],
        ...(version === null ? {} : { extensions: [A2UI_EXTENSION_URIS[version]] }),
        lastChunk: true,
      }),
      version !== null && formShown
        ? events.publish({
            kind: 'status',
            status: {
              state: 'TASK_STATE_COMPLETED',
              message: a2uiAgentMessage(scope, version, summary, [deleteSurface(formId)]),
            },
          })
        : events.complete(summary),
    ]);
  }
}
