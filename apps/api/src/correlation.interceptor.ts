import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { Observable } from 'rxjs';
import { runWithCorrelationId } from '@app/platform';

/**
 * Runs the handler inside the request's correlation id (pino-http's request id), so the jobs it
 * sends carry it to the workers.
 */
@Injectable()
export class CorrelationInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const id = context.switchToHttp().getRequest<{ id?: string }>().id;
    return new Observable((subscriber) => runWithCorrelationId(id, () => next.handle().subscribe(subscriber)));
  }
}
