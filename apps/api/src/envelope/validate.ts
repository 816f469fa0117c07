import { getMetadataStorage, ValidationError, Validator } from 'class-validator';
import type { ValidationMetadata } from 'class-validator/types/metadata/ValidationMetadata';
import { DomainError, FieldProblem } from '@app/contracts';
import type { FieldIssue } from './wire-fields';
import { decodeIssues, instantiate, passes, WIRE_CONSTRAINT } from './wire-fields';

const validator = new Validator();

/**
 * class-validator looks up and groups a class's constraints again on every call (a third of its
 * cost on a sale body). Our classes and their decorators are fixed once loaded, and we validate
 * without groups, so both lookups are remembered per class.
 */
const storage = getMetadataStorage();
const lookUp = storage.getTargetValidationMetadatas.bind(storage);
const group = storage.groupByPropertyName.bind(storage);
const looked = new Map<unknown, ValidationMetadata[]>();
const grouped = new WeakMap<ValidationMetadata[], ReturnType<typeof group>>();
storage.getTargetValidationMetadatas = (target, schema, always, strictGroups, groups) => {
  if (schema || always || strictGroups || groups?.length) return lookUp(target, schema, always, strictGroups, groups);
  let found = looked.get(target);
  if (!found) looked.set(target, (found = lookUp(target, schema, always, strictGroups, groups)));
  return found;
};
storage.groupByPropertyName = (metadata) => {
  let byName = grouped.get(metadata);
  if (!byName) grouped.set(metadata, (byName = group(metadata)));
  return byName;
};

/**
 * Validates a plain object with a DTO class and returns the instance, or throws one 400 listing
 * every problem with its wire code and path (`payment.split[2].percentage`), the first as the
 * headline. `across` adds rules that span objects. `prefix` is the path of the object on the wire
 * ("" for an operation's body). class-validator's executor runs only for a body that fails a
 * field's constraint (see `passes`).
 */
export function validated<T extends object>(
  cls: new () => T,
  plain: Record<string, unknown>,
  prefix = '',
  across?: (dto: T) => FieldProblem[],
): T {
  const instance = instantiate(cls, plain);
  const problems = passes(cls, instance as Record<string, unknown>) ? [] : problemsOf(classValidatorErrors(instance), prefix);
  // Rules across two objects (a sale's payment.amount against its order.totalAmount), in the same 400.
  if (across) problems.push(...across(instance));
  if (problems.length) throw DomainError.fields(problems);
  return instance;
}

/** class-validator's own run over the instance: every constraint, every nested object. */
export function classValidatorErrors(instance: object): ValidationError[] {
  return validator.validateSync(instance, { forbidUnknownValues: false, validationError: { target: false, value: false } });
}

export function problemsOf(errors: ValidationError[], prefix: string): FieldProblem[] {
  const out: FieldProblem[] = [];
  const walk = (list: ValidationError[], at: string) => {
    for (const e of list) {
      const path = /^\d+$/.test(e.property) ? `${at}[${e.property}]` : at ? `${at}.${e.property}` : e.property;
      const message = e.constraints?.[WIRE_CONSTRAINT];
      const issues = message === undefined ? [] : decodeIssues(message);
      for (const issue of issues) out.push(problem(path, issue));
      // A field refused as a whole (a wrong-typed object) is not looked into; a list whose problems
      // are some of its elements still has its other elements' problems reported.
      if (issues.every((i) => i.suffix) && e.children?.length) walk(e.children, path);
    }
  };
  walk(errors, prefix);
  return out;
}

function problem(path: string, issue: FieldIssue): FieldProblem {
  const parameter = `${path}${issue.suffix ?? ''}`;
  // A fragment ("must be …") is prefixed with the field; a sentence (card rules) stands alone.
  const text = /^[A-Z]/.test(issue.text) ? issue.text : `${parameter} ${issue.text}.`;
  return { code: issue.code, parameter, message: text };
}
