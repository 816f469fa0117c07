import type { FastifyReply, FastifyRequest } from 'fastify';
import { isMerchantPublicId, MerchantsRepository } from '@app/persistence';
import { RefusedError, roleAllows } from '@app/operators';
import { parseThrottle, SET_WEBHOOK_THROTTLE_ACTION, THROTTLE_VALUE_RULE, throttleShown } from '@app/webhooks';
import { ConsoleKit, subjectOf } from './console-kit';
import { problemPage } from './layout';
import { merchantPage } from './merchants.views';

/**
 * A merchant's settings page (by its public id) and the webhook throttle form. Reading needs the
 * viewer role; setting the throttle the operator role, as merchant:set-webhook-throttle does, and
 * it is audited under that command's action name (attempted then its outcome).
 */
export function registerMerchantRoutes(kit: ConsoleKit): void {
  const { scope, app, audit, csrf, frame, send } = kit;
  const merchants = app.get(MerchantsRepository);

  /** The internal id of a public id from the path; undefined when it names no merchant. */
  const merchantOf = async (publicId: string) => (isMerchantPublicId(publicId) ? merchants.resolve(publicId) : undefined);
  const notFound = (req: FastifyRequest, reply: FastifyReply) =>
    send(
      reply,
      404,
      problemPage(frame(req, reply, 'Merchant'), 404, 'No merchant has that id (10 digits, as merchant:create printed it).'),
    );

  scope.get('/merchants/:id', async (req, reply) => {
    const publicId = (req.params as { id: string }).id;
    const id = await merchantOf(publicId);
    const throttlePerS = id === undefined ? undefined : await merchants.webhookThrottleOf(id);
    if (throttlePerS === undefined) return notFound(req, reply);
    const f = frame(req, reply, `Merchant ${publicId}`);
    // Only when this session's POST saved it (a flash), never from the address.
    const saved = kit.takeFlash(req, reply)?.kind === 'saved';
    return send(reply, 200, merchantPage(f, { merchant: publicId, throttlePerS, canSet: roleAllows(f.operator!.role, 'operator'), saved }));
  });

  scope.post('/merchants/:id/webhook-throttle', { preHandler: csrf }, async (req, reply) => {
    const operator = kit.operatorOf(req);
    const publicId = (req.params as { id: string }).id;
    // The role first: a viewer's forged POST is refused (and recorded) whatever merchant it names.
    if (!(await kit.allowed(req, reply, 'operator', SET_WEBHOOK_THROTTLE_ACTION, publicId.slice(0, 64)))) return reply;
    const id = await merchantOf(publicId);
    if (!id) return notFound(req, reply);
    const given = (req.body as Record<string, unknown> | undefined)?.perSecond;
    const perS = typeof given === 'string' ? parseThrottle(given) : undefined;
    if (perS === undefined) {
      const current = (await merchants.webhookThrottleOf(id)) ?? null;
      return send(
        reply,
        400,
        merchantPage(frame(req, reply, `Merchant ${publicId}`), {
          merchant: publicId,
          throttlePerS: current,
          canSet: true,
          given: typeof given === 'string' ? given.slice(0, 64) : '',
          problem: `Deliveries per second (perSecond) ${THROTTLE_VALUE_RULE}.`,
        }),
      );
    }
    const subject = subjectOf(req, operator, SET_WEBHOOK_THROTTLE_ACTION, publicId);
    try {
      await audit.run({ ...subject, detail: { ...subject.detail, perSecond: throttleShown(perS) } }, async () => {
        if (!(await merchants.setWebhookThrottle(id, perS))) throw new RefusedError('not_found');
      });
    } catch (e) {
      if (!(e instanceof RefusedError)) throw e;
      return notFound(req, reply);
    }
    kit.setFlash(req, reply, `/console/merchants/${publicId}`, { kind: 'saved' });
    return reply.redirect(`/console/merchants/${publicId}`, 303);
  });
}
