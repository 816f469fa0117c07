import { Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiExcludeController } from '@nestjs/swagger';
import { DomainError, Events, ErrorCodes } from '@app/contracts';
import { type DeadEvent, listDead, replayDead } from '@app/messaging';
import { AdminQueues } from './admin-queues';

const EVENTS: readonly string[] = Object.values(Events);

/**
 * Events whose attempts ran out (a consumer that kept failing, e.g. through a long database
 * outage): listed without their payloads, and put back on their stream by an operator once the
 * cause is fixed. Behind the operator gate of admin.setup.ts (reading: viewer; replay: operator, audited).
 */
@ApiExcludeController()
@ApiBearerAuth()
@Controller('admin/events/dead')
export class AdminEventsController {
  constructor(private readonly queues: AdminQueues) {}

  @Get()
  async list(@Query('event') event?: string, @Query('limit') limit?: string) {
    const n = limitOf(limit);
    const dead: (DeadEvent & { event: string })[] = [];
    for (const name of event === undefined ? EVENTS : [eventOf(event)])
      for (const keys of this.queues.events.get(name)!)
        dead.push(...(await listDead(this.queues.redis, keys, n)).map((d) => ({ event: name, ...d })));
    dead.sort((a, b) => a.failedAt.localeCompare(b.failedAt));
    return { dead: dead.slice(0, n) };
  }

  @Post('replay')
  @HttpCode(202)
  async replay(@Query('event') event?: string, @Query('limit') limit?: string) {
    const name = eventOf(event);
    const n = limitOf(limit);
    let replayed = 0;
    // `limit` bounds the whole replay, over every partition.
    for (const keys of this.queues.events.get(name)!) {
      if (replayed >= n) break;
      replayed += await replayDead(this.queues.redis, keys, n - replayed);
    }
    return { event: name, replayed };
  }
}

function eventOf(event: string | undefined): string {
  if (typeof event !== 'string' || !EVENTS.includes(event))
    throw DomainError.validation(ErrorCodes.InvalidField, 'event', `event must be one of ${EVENTS.join(', ')}.`);
  return event;
}

function limitOf(limit: string | undefined): number {
  const n = limit === undefined ? 100 : Number(limit);
  if (!Number.isInteger(n) || n < 1 || n > 1000)
    throw DomainError.validation(ErrorCodes.InvalidField, 'limit', 'limit must be a whole number from 1 to 1000.');
  return n;
}
