import { Inject, Injectable, Module, type OnModuleDestroy } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { describe, expect, it } from 'vitest';
import { closedLast, type Closable } from './closed-last';

const RESOURCE = Symbol('RESOURCE');
const events: string[] = [];

class Resource implements Closable {
  ended = 0;
  end(): Promise<void> {
    this.ended += 1;
    events.push('resource ended');
    return Promise.resolve();
  }
}

@Injectable()
class User implements OnModuleDestroy {
  constructor(@Inject(RESOURCE) readonly resource: Resource) {}

  onModuleDestroy(): void {
    events.push(`user stopped (resource ended ${this.resource.ended} times)`);
  }
}

@Module({ providers: [...closedLast(RESOURCE, () => new Resource()), User] })
class AppModule {}

describe('closedLast', () => {
  it('gives the resource it makes, and ends it once, after the providers that use it have stopped', async () => {
    const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
    const resource = app.get<Resource>(RESOURCE);
    expect(app.get(User).resource).toBe(resource);
    await app.close();
    expect(events).toEqual(['user stopped (resource ended 0 times)', 'resource ended']);
    expect(resource.ended).toBe(1);
  });
});
