import { plainToInstance } from 'class-transformer';
import { ValidationError, Validator } from 'class-validator';
import { DomainError, FieldProblem } from '@app/contracts';
import { decodeIssue, WIRE_CONSTRAINT } from './wire-fields';

const validator = new Validator();

/**
 * Validates a plain object with a DTO class and returns the instance, or throws one 400 listing
 * every problem with its wire code and path (`payment.split[2].percentage`), the first as the
 * headline. `across` adds rules that span objects. `prefix` is the path of the object on the wire ("" for an operation's body).
 */
export function validated<T extends object>(cls: new () => T, plain: Record<string, unknown>, prefix = '', across?: (dto: T) => FieldProblem[]): T {
  const instance = plainToInstance(cls, plain);
  const errors = validator.validateSync(instance, { forbidUnknownValues: false, validationError: { target: false, value: false } });
  const problems = problemsOf(errors, prefix);
  // Rules across two objects (a sale's payment.amount against its order.totalAmount), in the same 400.
  if (across) problems.push(...across(instance));
  if (problems.length) throw DomainError.fields(problems);
  return instance;
}

export function problemsOf(errors: ValidationError[], prefix: string): FieldProblem[] {
  const out: FieldProblem[] = [];
  const walk = (list: ValidationError[], at: string) => {
    for (const e of list) {
      const path = /^\d+$/.test(e.property) ? `${at}[${e.property}]` : at ? `${at}.${e.property}` : e.property;
      const message = e.constraints?.[WIRE_CONSTRAINT];
      if (message !== undefined) {
        // The field's own check failed: what is inside it (a wrong-typed object) is not looked at.
        out.push(problem(path, message));
      } else if (e.children?.length) {
        walk(e.children, path);
      }
    }
  };
  walk(errors, prefix);
  return out;
}

function problem(path: string, message: string): FieldProblem {
  const issue = decodeIssue(message);
  const parameter = `${path}${issue.suffix ?? ''}`;
  // A fragment ("must be …") is prefixed with the field; a sentence (card rules) stands alone.
  const text = /^[A-Z]/.test(issue.text) ? issue.text : `${parameter} ${issue.text}.`;
  return { code: issue.code, parameter, message: text };
}
