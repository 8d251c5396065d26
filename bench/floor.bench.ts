/**
 * `npm run bench:floor`: what the durable path's invariants cost by themselves, beside the platform.
 *
 * The floor is the least any server of this shape can do for a blocking `SendMessage`: one process takes the
 * JSON-RPC request over HTTP, commits a row for the accepted message (durable before any worker sees it),
 * hands the message to a worker process over a connection it holds open, waits for the worker's answer,
 * commits a row for the result (durable before the caller sees it) and answers with a COMPLETED task. It does
 * none of the platform's own work: no authentication, validation, event log, view, work queue, audit or
 * protocol buffers. The platform (the standalone from `dist/`, its echo worker) and the floor, each on a
 * database of its own, get the same load from the same client, in parts taken in turns.
 *
 * Per level and side: requests/s, p50, the CPU per request of the server, the worker and their Postgres
 * backends (/proc), and floor / platform. Options: `--levels 1,16` (default), `--seconds N` (per level and
 * side, default 10), `--slices N` (parts per level and side, default 2), `--warmup N` (seconds per side at
 * each level before its parts, default 3).
 */
import { createTestDatabase, freePort, PlatformProcess } from '@lib/testing';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer as createHttpServer } from 'node:http';
import { connect, createServer as createNetServer, type Socket } from 'node:net';
import { Pool } from 'pg';
import {
  attempted,
  completedPerSecond,
  mergeLoads,
  openSender,
  runClosedLoop,
  type LoadResult,
  type Sender,
} from './support/a2a-load';
import { BenchPlatform } from './support/bench-platform';
import { DatabaseStats } from './support/database-stats';
import { ascending, fmt, percentile, printMachine, table } from './support/figures';
import { cpuSecondsBetween, ticksByPid } from './support/proc-stats';

interface Options {
  levels: number[];
  seconds: number;
  slices: number;
  warmupSeconds: number;
}

const USAGE = 'options: --levels 1,16, --seconds N, --slices N, --warmup N';

function parseOptions(argv: readonly string[]): Options {
  const options: Options = { levels: [1, 16], seconds: 10, slices: 2, warmupSeconds: 3 };
  for (let i = 0; i < argv.length; i += 2) {
    const flag = argv[i] ?? '';
    const value = argv[i + 1] ?? '';
    const numbers = value.split(',').map(Number);
    if (!numbers.every((n) => Number.isInteger(n) && n > 0)) {
      throw new Error(`${flag} needs positive integers, got ${value}\n${USAGE}`);
    }
    const [n = 1] = numbers;
    switch (flag) {
      case '--levels':
        options.levels = numbers;
        break;
      case '--seconds':
        options.seconds = n;
        break;
      case '--slices':
        options.slices = n;
        break;
      case '--warmup':
        options.warmupSeconds = n;
        break;
      default:
        throw new Error(`unknown argument ${flag}\n${USAGE}`);
    }
  }
  return options;
}

/** Lines of JSON on a socket, each handed to `onLine`. */
function readLines(socket: Socket, onLine: (line: string) => void): void {
  let buffered = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    buffered += chunk;
    for (let end = buffered.indexOf('\n'); end >= 0; end = buffered.indexOf('\n')) {
      onLine(buffered.slice(0, end));
      buffered = buffered.slice(end + 1);
    }
  });
}

/** The floor's worker on `port`: answers each message with an artifact holding its parts. */
function runWorker(port: number): void {
  const server = createNetServer((socket) => {
    socket.setNoDelay(true);
    readLines(socket, (line) => {
      const { id, parts } = JSON.parse(line) as { id: string; parts: unknown };
      socket.write(`${JSON.stringify({ id, artifact: { artifactId: id, parts } })}\n`);
    });
  });
  server.listen(port, '127.0.0.1', () => console.log('listening'));
}

/** The floor's server on `port`: two commits and a hop to the worker per message. */
async function runServer(port: number, databaseUrl: string, workerPort: number): Promise<void> {
  const pool = new Pool({ connectionString: databaseUrl, max: 10 });
  await pool.query(
    'CREATE TABLE IF NOT EXISTS floor_steps (id uuid, step smallint, body text, PRIMARY KEY (id, step))',
  );
  const worker = connect(workerPort, '127.0.0.1');
  worker.setNoDelay(true);
  await once(worker, 'connect');
  const waiting = new Map<string, (artifact: unknown) => void>();
  readLines(worker, (line) => {
    const { id, artifact } = JSON.parse(line) as { id: string; artifact: unknown };
    waiting.get(id)?.(artifact);
    waiting.delete(id);
  });
  const commit = (id: string, step: number, body: string): Promise<unknown> =>
    pool.query({
      name: 'floor-step',
      text: 'INSERT INTO floor_steps (id, step, body) VALUES ($1, $2, $3)',
      values: [id, step, body],
    });
  const answer = async (body: string): Promise<string> => {
    const request = JSON.parse(body) as {
      id: unknown;
      params: { message: { messageId: string; contextId?: string; parts: unknown } };
    };
    const id = randomUUID();
    await commit(id, 1, body);
    const artifact = await new Promise<unknown>((resolve) => {
      waiting.set(id, resolve);
      worker.write(`${JSON.stringify({ id, parts: request.params.message.parts })}\n`);
    });
    const task = {
      id,
      contextId: request.params.message.contextId ?? id,
      status: { state: 'TASK_STATE_COMPLETED', timestamp: new Date().toISOString() },
      artifacts: [artifact],
      history: [request.params.message],
    };
    await commit(id, 2, JSON.stringify(task));
    return JSON.stringify({ jsonrpc: '2.0', id: request.id, result: { task } });
  };
  const server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      answer(Buffer.concat(chunks).toString('utf8')).then(
        (out) => {
          res.writeHead(200, { 'Content-Type': 'application/json' }).end(out);
        },
        (error: unknown) => {
          res.writeHead(500).end(String(error));
        },
      );
    });
  });
  server.listen(port, '127.0.0.1', () => console.log('listening'));
}

/** This script started in `role` (`dist/bench/floor.bench.js --role <role> <args>`), once it listens. */
async function startRole(role: string, args: readonly string[]): Promise<PlatformProcess> {
  const child = new PlatformProcess(
    `the floor's ${role}`,
    'bench/floor.bench.js',
    ['--role', role, ...args],
    {},
  ).start();
  await child.waitForOutput(/listening/);
  return child;
}

interface Side {
  name: 'platform' | 'floor';
  sender: Sender;
  /** CPU ticks by pid of the server, the worker and the side's Postgres backends. */
  sampleCpu: () => Promise<Record<'server' | 'worker' | 'postgres', Map<number, number>>>;
}

interface Tally {
  load: LoadResult | null;
  server: number;
  worker: number;
  postgres: number;
}

async function measurePart(
  side: Side,
  concurrency: number,
  ms: number,
  tally: Tally,
): Promise<void> {
  const before = await side.sampleCpu();
  const load = await runClosedLoop(side.sender.send, concurrency, ms);
  const after = await side.sampleCpu();
  tally.load = tally.load ? mergeLoads(tally.load, load) : load;
  tally.server += cpuSecondsBetween(before.server, after.server);
  tally.worker += cpuSecondsBetween(before.worker, after.worker);
  tally.postgres += cpuSecondsBetween(before.postgres, after.postgres);
}

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  console.log('# The floor of a durable SendMessage beside the platform (npm run bench:floor)');
  console.log(
    `levels: ${options.levels.join(', ')}; per level and side: ${options.seconds} s in ${options.slices} ` +
      `parts, taken in turns (platform, floor, floor, platform, …), after ${options.warmupSeconds} s of warm-up`,
  );
  const stops: (() => Promise<void>)[] = [];
  try {
    const platformDb = await createTestDatabase('floor-platform');
    stops.push(() => platformDb.drop());
    const platform = await BenchPlatform.start(platformDb, null, {});
    stops.push(() => platform.stop());
    // (Migrated like any test database; the floor uses a table of its own only.)
    const floorDb = await createTestDatabase('floor');
    stops.push(() => floorDb.drop());
    const floorStats = await DatabaseStats.connect(floorDb.url);
    stops.push(() => floorStats.close());
    const [workerPort, serverPort] = await Promise.all([freePort(), freePort()]);
    const worker = await startRole('worker', [String(workerPort)]);
    stops.push(() => worker.stop());
    const server = await startRole('server', [String(serverPort), floorDb.url, String(workerPort)]);
    stops.push(() => server.stop());

    const sides: Side[] = [
      {
        name: 'platform',
        sender: openSender('send', 'jsonrpc', platform.endpoints),
        sampleCpu: async () => {
          const { standalone, worker: echo, postgres } = await platform.sampleCpu();
          return { server: standalone, worker: echo, postgres };
        },
      },
      {
        name: 'floor',
        sender: openSender('send', 'jsonrpc', {
          jsonrpcUrl: `http://127.0.0.1:${serverPort}/`,
          restBaseUrl: '',
          grpcTarget: '',
          grpcTenant: '',
        }),
        sampleCpu: async () => ({
          server: ticksByPid([server.pid ?? 0]),
          worker: ticksByPid([worker.pid ?? 0]),
          postgres: ticksByPid(await floorStats.backendPids()),
        }),
      },
    ];
    printMachine(await platform.postgresVersion());

    const rows: string[][] = [];
    const partMs = (options.seconds * 1_000) / options.slices;
    let complete = true;
    for (const concurrency of options.levels) {
      const tallies = sides.map((side) => ({
        side,
        tally: { load: null, server: 0, worker: 0, postgres: 0 } as Tally,
      }));
      for (const { side } of tallies) {
        await runClosedLoop(side.sender.send, concurrency, options.warmupSeconds * 1_000);
      }
      for (let part = 0; part < options.slices; part++) {
        for (const { side, tally } of part % 2 === 0 ? tallies : [...tallies].reverse()) {
          await measurePart(side, concurrency, partMs, tally);
        }
      }
      const figures = tallies.map(({ side, tally }) => {
        const n = tally.load ? attempted(tally.load) : 0;
        const ms = (seconds: number): number => (n > 0 ? (1_000 * seconds) / n : NaN);
        const rate = tally.load ? completedPerSecond(tally.load) : NaN;
        complete &&= rate > 0 && (tally.load?.errors ?? 1) === 0;
        const cpu = [ms(tally.server), ms(tally.worker), ms(tally.postgres)] as const;
        return {
          side,
          rate,
          p50: percentile(ascending(tally.load?.latenciesMs ?? []), 50),
          errors: tally.load?.errors ?? 0,
          cpu,
          all: cpu[0] + cpu[1] + cpu[2],
        };
      });
      for (const f of figures) {
        rows.push([
          `c=${concurrency}`,
          f.side.name,
          fmt(f.rate),
          fmt(f.p50, 2),
          String(f.errors),
          ...f.cpu.map((value) => fmt(value, 2)),
          fmt(f.all, 2),
        ]);
      }
      const [p, f] = figures;
      if (p && f) {
        rows.push([
          `c=${concurrency}`,
          'floor / platform',
          fmt(f.rate / p.rate, 2),
          fmt(f.p50 / p.p50, 3),
          '-',
          ...f.cpu.map((value, i) => fmt(value / (p.cpu[i] ?? NaN), 3)),
          fmt(f.all / p.all, 3),
        ]);
      }
    }
    console.log('');
    console.log(
      table(
        [
          'level',
          'side',
          'requests/s',
          'p50 ms',
          'errors',
          'server ms',
          'worker ms',
          'PG ms',
          'all ms',
        ],
        rows,
        [0, 1],
      ),
    );
    console.log(
      "CPU per request (/proc, user + system): server: the standalone or the floor's server; worker: the echo\n" +
        "worker or the floor's; PG: the backends connected to the side's database. The floor commits one row\n" +
        'for the accepted message and one for the result, and hands the message to its worker over TCP (lines\n' +
        'of JSON): what any durable server of this shape must do, and nothing else.',
    );
    return complete ? 0 : 1;
  } finally {
    for (const stop of stops.reverse()) {
      await stop().catch((error: unknown) => console.error(String(error)));
    }
  }
}

const role = process.argv[2] === '--role' ? process.argv[3] : undefined;
if (role === 'worker') {
  runWorker(Number(process.argv[4]));
} else if (role === 'server') {
  void runServer(Number(process.argv[4]), process.argv[5] ?? '', Number(process.argv[6]));
} else {
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
