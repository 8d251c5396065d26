/**
 * Dead letters in the operator console (issue 14), produced by the platform itself: the whole platform with its
 * relay and push dispatcher on a Kafka topic of this file's own, a webhook receiver on 127.0.0.1 (allowlisted
 * for demo) that answers 500 until told to accept, and a short retry budget, so that an echo task's deliveries
 * are dead-lettered within seconds. A platform admin then finds them on the Webhook deliveries page, redrives
 * one, and sees it delivered: the receiver got it, signed with the ingress's key.
 */
import { LANE_QUEUE } from '@lib/push';
import { kafkaBrokers, uniqueTopic } from '@lib/testing';
import { Queue } from 'bullmq';
import { compactVerify, createLocalJWKSet, type JSONWebKeySet } from 'jose';
import { randomUUID } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTopic, deleteTopic } from '../../apps/relay/test/support/topic';
import { eventually, rawRpc, rawUserMessage, request, sentTask } from '../e2e/support/json-rpc';
import { WebhookReceiver } from '../e2e/support/webhook-receiver';
import {
  accessibilityViolations,
  expectCleanPage,
  launchChromium,
  openPage,
  type PageProblems,
} from './support/browser';
import { bootConsolePlatform, type ConsolePlatform } from './support/console-platform';

const SUFFIX = randomUUID().slice(0, 8);
const QUEUE_PREFIX = `console-dl-${SUFFIX}`;
const REDIS_URL = 'redis://127.0.0.1:6379';
/** Attempts before a delivery is dead (500 is retried, so each delivery is tried this often). */
const MAX_ATTEMPTS = 3;

let brokers: string[];
let topic: string;
let platform: ConsolePlatform;
let receiver: WebhookReceiver;
let browser: Browser;
let page: Page;
let problems: PageProblems;

interface Delivery {
  deliveryId: string;
  taskId: string;
  generation: number;
  state: string;
  attempts: number;
}

/** A task's deliveries in one state, through the admin API (only to wait for the dispatcher). */
async function deliveries(taskId: string, state: string): Promise<Delivery[]> {
  const response = await fetch(
    `${platform.baseUrl}/admin/v1/tenants/demo/push-deliveries?task=${taskId}&state=${state}`,
    { headers: { Authorization: `Bearer ${platform.adminToken}` } },
  );
  expect(response.status).toBe(200);
  return ((await response.json()) as { deliveries: Delivery[] }).deliveries;
}

beforeAll(async () => {
  brokers = await kafkaBrokers();
  topic = uniqueTopic('console-deadletter');
  await createTopic(brokers, topic);
  receiver = await WebhookReceiver.start(() => 500);
  [platform, browser] = await Promise.all([
    bootConsolePlatform('console_deadletter', {
      START_RELAY: 'true',
      START_PUSH_DISPATCHER: 'true',
      KAFKA_BROKERS: brokers.join(','),
      TASK_EVENTS_TOPIC: topic,
      RELAY_IDLE_POLL_MS: '20',
      PUSH_CONSUMER_GROUP: `console-dl-${SUFFIX}`,
      PUSH_QUEUE_PREFIX: QUEUE_PREFIX,
      REDIS_URL,
      PUSH_ALLOWLIST: JSON.stringify({ demo: ['127.0.0.1'] }),
      PUSH_BACKOFF_BASE_MS: '100',
      PUSH_BACKOFF_CAP_MS: '400',
      PUSH_MAX_ATTEMPTS: String(MAX_ATTEMPTS),
      // Only the redrive's own lane job can send the redriven delivery within the test's waits.
      PUSH_RECONCILE_INTERVAL_MS: '3600000',
    }),
    launchChromium(),
  ]);
  ({ page, problems } = await openPage(browser));
});

afterAll(async () => {
  await browser?.close();
  await platform?.close();
  await receiver?.close();
  const queue = new Queue(LANE_QUEUE, { connection: { url: REDIS_URL }, prefix: QUEUE_PREFIX });
  await queue.obliterate({ force: true }).catch(() => undefined);
  await queue.close();
  await deleteTopic(brokers, topic).catch(() => undefined);
});

describe('dead-lettered webhook deliveries in the operator console', () => {
  it('lists a task’s real dead letters with their attempts and last error, redrives one, and sees it delivered', async () => {
    const task = sentTask(
      await rawRpc(
        platform.endpoint('demo', 'echo'),
        request('SendMessage', {
          message: rawUserMessage('dead letter'),
          configuration: { taskPushNotificationConfig: { url: receiver.url('/hooks/failing') } },
        }),
      ),
    );
    expect(task.status.state).toBe('TASK_STATE_COMPLETED');
    // submitted, working, the artifact, completed: each retried, then dead.
    const dead = await eventually(
      () => deliveries(task.id, 'dead'),
      (got) => got.length === 4,
      30_000,
    );
    const tries = receiver.posts.filter((p) => p.taskId === task.id);
    expect(tries.map((p) => p.answer)).toStrictEqual(Array<number>(4 * MAX_ATTEMPTS).fill(500));

    await page.goto(platform.consoleUrl);
    await page.getByLabel('Admin credential').fill(platform.adminToken);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('link', { name: 'demo', exact: true }).waitFor();
    await page.goto(`${platform.consoleUrl}#/tenants/demo/deliveries`);
    await page.getByRole('heading', { level: 1, name: 'Webhook deliveries of demo' }).waitFor();
    await page.getByLabel('Task id').fill(task.id);
    await page.getByLabel('State').selectOption('dead');
    await page.getByRole('button', { name: 'Filter' }).click();
    const rows = page.getByRole('row');
    await expect.poll(() => rows.count()).toBe(1 + dead.length);
    for (const delivery of dead) {
      expect(
        await page.getByRole('row', { name: new RegExp(delivery.deliveryId) }).textContent(),
      ).toMatch(new RegExp(`dead\\s*${MAX_ATTEMPTS}\\s*500\\s*HTTP 500`));
    }
    await expectCleanPage(page, problems, 'operator-deliveries-dead');

    // The receiver is fixed; the operator redrives the task's first event.
    receiver.answering = () => 200;
    const first = dead.reduce((a, b) => (a.generation <= b.generation ? a : b));
    await page.getByRole('button', { name: `Redrive delivery ${first.deliveryId}` }).click();
    await page.getByText(`Delivery ${first.deliveryId} redriven: pending`).waitFor();
    // No longer a dead letter: the other three are.
    await expect.poll(() => rows.count()).toBe(dead.length);
    expect(await page.getByRole('row', { name: new RegExp(first.deliveryId) }).count()).toBe(0);

    await page.getByLabel('State').selectOption('delivered');
    await page.getByRole('button', { name: 'Filter' }).click();
    const redriven = page.getByRole('row', { name: new RegExp(first.deliveryId) });
    await expect
      .poll(
        async () => {
          await page.getByRole('button', { name: 'Refresh' }).click();
          return redriven.count();
        },
        { timeout: 15_000 },
      )
      .toBe(1);
    // Sent again from its first attempt, and accepted at once.
    expect(await redriven.textContent()).toMatch(/delivered\s*1\s*200/);
    expect(await rows.count()).toBe(2);

    const accepted = receiver.acceptedOf(task.id);
    expect(accepted.map((p) => p.deliveryId)).toStrictEqual([first.deliveryId]);
    const post = accepted[0]!;
    const keys = (await (
      await fetch(`${platform.baseUrl}/.well-known/jwks.json`)
    ).json()) as JSONWebKeySet;
    const [header, , signature] = String(post.headers['x-a2a-signature']).split('.');
    const verified = await compactVerify(
      `${header}.${post.body.toString('base64url')}.${signature}`,
      createLocalJWKSet(keys),
    );
    expect(verified.protectedHeader['a2a']).toStrictEqual({
      deliveryId: first.deliveryId,
      taskId: task.id,
      generation: first.generation,
    });
    expect(JSON.parse(post.body.toString('utf8'))).toMatchObject({
      task: { id: task.id, status: { state: 'TASK_STATE_SUBMITTED' } },
    });
    // A task's deliveries have a page of their own (linked from the task page): one delivered, three dead.
    await page.goto(`${platform.consoleUrl}#/tenants/demo/deliveries/${task.id}`);
    await page.getByRole('heading', { level: 1, name: 'Webhook deliveries of demo' }).waitFor();
    expect(await page.getByLabel('Task id').inputValue()).toBe(task.id);
    await expect.poll(() => rows.count()).toBe(1 + dead.length);
    const states = (await rows.allTextContents())
      .slice(1)
      .map((text) => /\b(dead|delivered)\b/.exec(text)?.[1]);
    expect(states.sort()).toStrictEqual(['dead', 'dead', 'dead', 'delivered']);
    expect(await accessibilityViolations(page)).toEqual([]);
    expect(problems.list).toEqual([]);
  });
});
