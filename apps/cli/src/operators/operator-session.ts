import { Injectable } from '@nestjs/common';
import type { OperatorRole } from '@app/operators';

/** Who runs this CLI process, once CommandGate has checked the token; what a command adds to its audit event. */
@Injectable()
export class OperatorSession {
  /** Undefined only while the first admin is being bootstrapped. */
  actor?: { id: string; name: string; role: OperatorRole };
  /** The target the audit event names when the command learns it while running (a new merchant's id). */
  target?: string;
}
