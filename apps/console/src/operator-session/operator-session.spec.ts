import fastifyCookie from '@fastify/cookie';
import Fastify, { FastifyInstance, FastifyRequest } from 'fastify';
import type { OperatorsRepository } from '@app/persistence';
import {
  SECURE_SESSION_COOKIE,
  SESSION_COOKIE,
  sessionCookieName,
  sessionCookieOptions,
  sessionIdOf,
  touchOperator,
} from './operator-session';

describe('the console session cookie', () => {
  let fastify: FastifyInstance;
  const request = (cookie: string, protocol: 'http' | 'https' = 'http') => ({ headers: { cookie }, protocol }) as unknown as FastifyRequest;

  beforeAll(async () => {
    fastify = Fastify();
    await fastify.register(fastifyCookie, { secret: 'k'.repeat(32) });
    await fastify.ready();
  });
  afterAll(() => fastify.close());

  it('is __Host-gw_console when Secure: Secure, Path=/, no Domain', () => {
    expect(sessionCookieName(true)).toBe('__Host-gw_console');
    expect(sessionCookieName(false)).toBe('gw_console');
    const options = sessionCookieOptions(true);
    expect(options).toMatchObject({ secure: true, path: '/', httpOnly: true, sameSite: 'strict', signed: true });
    expect(options).not.toHaveProperty('domain');
  });

  it('is read only under the name of the request mode: production never reads the plain name', () => {
    const signed = fastify.signCookie('session-id');
    const plain = `${SESSION_COOKIE}=${encodeURIComponent(signed)}`;
    const host = `${SECURE_SESSION_COOKIE}=${encodeURIComponent(signed)}`;
    expect(sessionIdOf(fastify, request(plain), false)).toBe('session-id');
    expect(sessionIdOf(fastify, request(plain), true)).toBeUndefined();
    expect(sessionIdOf(fastify, request(plain, 'https'), false)).toBeUndefined();
    expect(sessionIdOf(fastify, request(host), true)).toBe('session-id');
    expect(sessionIdOf(fastify, request(host, 'https'), false)).toBe('session-id');
    // Over plain http in development, a planted __Host- cookie is not read either.
    expect(sessionIdOf(fastify, request(host), false)).toBeUndefined();
  });

  it('is refused when its signature does not hold', () => {
    expect(sessionIdOf(fastify, request(`${SESSION_COOKIE}=session-id.forged`), false)).toBeUndefined();
  });
});

describe('touchOperator', () => {
  it('writes an operator’s last use at most once a minute, each operator on its own', async () => {
    const touched: string[] = [];
    const operators = { touch: (id: string) => Promise.resolve(void touched.push(id)) } as unknown as OperatorsRepository;
    const t0 = 1_800_000_000_000;
    await touchOperator(operators, 'a', t0);
    await touchOperator(operators, 'a', t0 + 1_000);
    await touchOperator(operators, 'b', t0 + 2_000);
    await touchOperator(operators, 'a', t0 + 59_999);
    expect(touched).toEqual(['a', 'b']);
    await touchOperator(operators, 'a', t0 + 60_000);
    await touchOperator(operators, 'b', t0 + 30_000);
    expect(touched).toEqual(['a', 'b', 'a']);
  });
});
