import { Body, Controller, Get, HttpCode, HttpException, Param, Post, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsOptional, IsString, Matches, MaxLength, validateSync } from 'class-validator';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isBreakGlassCommand, isRemoteCommand, REMOTE_COMMANDS } from '@app/contracts';
import { looksLikeOperatorToken } from '@app/operators';
import { CommandRun, CommandRunner } from './command-runner';

/** POST /admin/commands/<name>: the command's arguments as the CLI would take them after its name. */
export class CommandBody {
  @IsArray({ message: 'args must be an array of strings' })
  @ArrayMaxSize(64, { message: 'args holds at most 64 arguments' })
  @IsString({ each: true, message: 'every argument in args must be a string' })
  @MaxLength(4096, { each: true, message: 'an argument in args is longer than 4096 characters' })
  // A NUL cannot be in a process argument, and no other control character belongs in one.
  @Matches(/^[^\u0000-\u0008\u000b-\u001f\u007f]*$/, { each: true, message: 'an argument in args holds a control character' })
  args!: string[];

  /** What the command reads on its standard input (a secret given with --secret-stdin); never logged. */
  @IsOptional()
  @IsString({ message: 'stdin must be a string' })
  @MaxLength(4096, { message: 'stdin is longer than 4096 characters' })
  stdin?: string;
}

const fail = (status: number, error: string): never => {
  throw new HttpException({ error }, status);
};

/** A client's own name for itself (`cli user@host`), kept printable and short for the audit trail. */
function clientName(header: string | string[] | undefined): string {
  const value = Array.isArray(header) ? header[0] : header;
  const clean = (value ?? 'unnamed client').replace(/[^\x20-\x7e]/g, '?').slice(0, 120);
  return clean || 'unnamed client';
}

/**
 * The operator commands, run here rather than on the operator's machine: the caller needs its
 * operator token and nothing else (no database login), and the role check and the audit trail
 * happen in a process the caller does not control.
 */
@ApiExcludeController()
@Controller('admin/commands')
export class CommandsController {
  constructor(private readonly runner: CommandRunner) {}

  @Get()
  list(): { commands: readonly string[] } {
    return { commands: REMOTE_COMMANDS };
  }

  @Post(':name')
  @HttpCode(200)
  async run(
    @Param('name') name: string,
    @Body() body: unknown,
    @Req() req: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<CommandRun> {
    const auth = req.headers.authorization ?? '';
    const token = /^Bearer (\S+)$/.exec(auth)?.[1];
    if (!looksLikeOperatorToken(token)) fail(401, 'send your operator token as Authorization: Bearer <token>');
    if (isBreakGlassCommand(name))
      fail(400, `${name} is a break-glass command: it runs only where the break-glass database login is, with npm run cli there`);
    if (!isRemoteCommand(name)) fail(404, `no operator command ${name}: GET /admin/commands lists them`);
    const parsed = Object.assign(new CommandBody(), typeof body === 'object' && body !== null && !Array.isArray(body) ? body : {});
    const problems = validateSync(parsed, { forbidUnknownValues: true });
    if (problems.length) fail(400, Object.values(problems[0].constraints ?? {})[0] ?? 'the body must be {"args": [...]}');
    if (!this.runner.tryReserve()) {
      reply.header('retry-after', '5');
      fail(429, 'the admin app is running as many commands as it may (ADMIN_MAX_COMMANDS): try again shortly');
    }
    return this.runner.run({
      name,
      args: parsed.args,
      stdin: parsed.stdin,
      token: token!,
      origin: `admin app for ${clientName(req.headers['x-gateway-client'])} from ${req.ip}`,
    });
  }
}
