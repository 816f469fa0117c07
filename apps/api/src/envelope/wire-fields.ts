import { ApiProperty, ApiPropertyOptions } from '@nestjs/swagger';
import { registerDecorator, ValidateNested } from 'class-validator';
import { ErrorCode, ErrorCodes } from '@app/contracts';

/**
 * The field decorators of the merchant contract. Each one is a class-validator constraint and the
 * field's OpenAPI description at once, so what /docs shows is what the gateway checks.
 *
 * The wire is liberal (existing integrations rely on it): integers come as JSON numbers or as
 * digits in a string, flags as booleans or "true"/"false", text fields may be sent as numbers, and
 * an empty string or null is the same as an absent field. One check per field decides presence,
 * type, format and bounds, and names the first problem with its wire code.
 */

/** A field's problem: its wire code, and either a fragment ("must be …") or a whole sentence. */
export interface FieldIssue {
  code: ErrorCode;
  text: string;
  /** Appended to the field's path, e.g. "[2]" for one element of a list. */
  suffix?: string;
}

/** A field's problem, or problems of its parts (a list's elements, each with its suffix). */
export type FieldCheck = (value: unknown, owner: Record<string, unknown>) => FieldIssue | FieldIssue[] | null;

/** The constraint name every wire field registers; the error mapper reads its message. */
export const WIRE_CONSTRAINT = 'wire';
const SEPARATOR = '\u0001';
const LIST = '\u0002';

export function encodeIssues(issues: FieldIssue | FieldIssue[]): string {
  return (Array.isArray(issues) ? issues : [issues]).map((i) => [i.code, i.suffix ?? '', i.text].join(SEPARATOR)).join(LIST);
}

export function decodeIssues(message: string): FieldIssue[] {
  return message.split(LIST).map((one) => {
    const [code, suffix, text] = one.split(SEPARATOR);
    return { code: code as ErrorCode, suffix, text };
  });
}

export const present = (v: unknown): boolean => v !== undefined && v !== null && v !== '';
export const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export const invalid = (text: string, suffix?: string): FieldIssue => ({ code: ErrorCodes.InvalidField, text, suffix });
const missing: FieldIssue = { code: ErrorCodes.MissingField, text: 'is required' };

export interface Presence {
  /** Or a rule on the rest of the object (a card field is required unless a token is sent). */
  required?: boolean | ((owner: Record<string, unknown>) => boolean);
  /** Runs after the field's own format passed, with the whole object (cross-field rules). */
  also?: FieldCheck;
  /** Shown in /docs. */
  description?: string;
  example?: unknown;
}

type Ctor = new () => object;
interface FieldShape {
  /** The class of a nested object, or of each element of a nested list. */
  nested?: () => Ctor;
  /** A nested list's bound. */
  maxItems?: number;
  /** The field's constraint, as class-validator runs it. */
  run?: FieldCheck;
}

/** Every class's wire fields, in declaration order: what `instantiate` copies. */
const FIELDS = new Map<object, Map<string, FieldShape>>();

function shapeOf(target: object, key: string): FieldShape {
  let fields = FIELDS.get(target.constructor);
  if (!fields) FIELDS.set(target.constructor, (fields = new Map<string, FieldShape>()));
  let shape = fields.get(key);
  if (!shape) fields.set(key, (shape = {}));
  return shape;
}

/** A class's wire fields, its ancestors' included (a subclass validates what its parent declares). */
function fieldsOf(cls: object): Map<string, FieldShape> {
  const all = new Map<string, FieldShape>();
  const chain: object[] = [];
  for (let c: object | null = cls; c && c !== Function.prototype; c = Object.getPrototypeOf(c) as object | null) chain.unshift(c);
  for (const c of chain) for (const [k, v] of FIELDS.get(c) ?? []) all.set(k, v);
  return all;
}

const shapes = new Map<object, Map<string, FieldShape>>();

/**
 * The plain object as an instance of `cls` (nested objects and list elements as theirs), which
 * is what class-validator validates. Only declared fields are copied: anything else a merchant
 * sends is ignored, and no key of the input ever lands on a prototype. What a field's own check
 * refuses is not copied in full: an array given for an object field, or a list longer than its
 * bound, would otherwise cost a validation per element (64 KiB of `{}` is 20 000 of them).
 */
export function instantiate<T extends object>(cls: new () => T, plain: Record<string, unknown>): T {
  let fields = shapes.get(cls);
  if (!fields) shapes.set(cls, (fields = fieldsOf(cls)));
  const out = Object.create(cls.prototype as object) as Record<string, unknown>;
  for (const [key, shape] of fields) {
    if (!Object.prototype.hasOwnProperty.call(plain, key)) continue;
    const v = plain[key];
    if (!shape.nested) out[key] = v;
    else if (isPlainObject(v)) out[key] = shape.maxItems === undefined ? instantiate(shape.nested(), v) : v;
    else if (Array.isArray(v)) {
      // An object field given an array: an empty one is enough for its check to refuse.
      out[key] =
        shape.maxItems === undefined
          ? []
          : v.slice(0, shape.maxItems + 1).map((e) => (isPlainObject(e) ? instantiate(shape.nested!(), e) : null));
    } else out[key] = v;
  }
  return out as T;
}

/**
 * Whether every field of the instance (and of its nested objects and list elements) meets its
 * constraint: the very checks class-validator runs, called directly. A body that passes needs
 * nothing more; class-validator's executor, which costs about three times the checks themselves
 * in bookkeeping, then only runs on a body it will refuse, to list every problem with its path.
 */
export function passes(cls: object, obj: Record<string, unknown>): boolean {
  let fields = shapes.get(cls);
  if (!fields) shapes.set(cls, (fields = fieldsOf(cls)));
  for (const [key, shape] of fields) {
    const v = obj[key];
    if (shape.run && shape.run(v, obj) !== null) return false;
    if (!shape.nested || v === undefined || v === null) continue;
    if (shape.maxItems === undefined) {
      if (isPlainObject(v) && !passes(shape.nested(), v)) return false;
    } else if (Array.isArray(v)) {
      for (const e of v) if (isPlainObject(e) && !passes(shape.nested(), e)) return false;
    }
  }
  return true;
}

/** Registers `check` as the field's constraint, and `doc` as its OpenAPI property. */
function wireField(doc: ApiPropertyOptions, check: FieldCheck, presence: Presence): PropertyDecorator {
  return (target: object, propertyName: string | symbol) => {
    ApiProperty({
      required: presence.required === true,
      description: presence.description,
      example: presence.example,
      ...doc,
    } as ApiPropertyOptions)(target, propertyName);
    const key = String(propertyName);
    const shape = shapeOf(target, key);
    const run = (value: unknown, owner: Record<string, unknown>): FieldIssue | FieldIssue[] | null => {
      if (!present(value)) {
        const required = typeof presence.required === 'function' ? presence.required(owner) : presence.required;
        return required ? missing : null;
      }
      return check(value, owner) ?? presence.also?.(value, owner) ?? null;
    };
    shape.run = run;
    registerDecorator({
      name: WIRE_CONSTRAINT,
      target: target.constructor,
      propertyName: key,
      options: { message: (args) => encodeIssues(run(args.value, args.object as Record<string, unknown>)!) },
      validator: { validate: (value: unknown, args) => run(value, args!.object as Record<string, unknown>) === null },
    });
  };
}

export interface TextRule extends Presence {
  max?: number;
  pattern?: RegExp;
  /** Sentence fragment when the pattern does not match, e.g. "must be 6 digits (YYYYMM)". */
  hint?: string;
  /** For /docs when the pattern is stricter than it reads. */
  minLength?: number;
}

/** Decimal text of a number sent where text is expected (an id or reference written as a number). */
export function textOf(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return undefined;
}

export function checkText(v: unknown, rule: TextRule): FieldIssue | null {
  const s = textOf(v);
  if (s === undefined) return invalid('must be a string');
  if (rule.max !== undefined && s.length > rule.max) return invalid(`must be at most ${rule.max} characters`);
  if (rule.pattern && !rule.pattern.test(s)) return invalid(rule.hint ?? 'has an invalid format');
  return null;
}

/** A text field; a JSON number is read as its decimal text. */
export function Text(rule: TextRule = {}): PropertyDecorator {
  return wireField(
    { type: 'string', maxLength: rule.max, minLength: rule.minLength, pattern: rule.pattern?.source },
    (v) => checkText(v, rule),
    rule,
  );
}

export interface IntRule extends Presence {
  min?: number;
  max?: number;
}

const WHOLE = 'must be a whole number (integer cents for amounts)';

/** An integer from a JSON number or from digits; a decimal point is an error, never a guess. */
export function intOf(v: unknown): number | FieldIssue {
  if (typeof v === 'number') return Number.isSafeInteger(v) ? v : invalid(WHOLE);
  if (typeof v === 'string') {
    if (!/^-?\d{1,16}$/.test(v)) return invalid(WHOLE);
    const n = Number(v);
    return Number.isSafeInteger(n) ? n : invalid('is too large');
  }
  return invalid('must be a whole number');
}

export function Int(rule: IntRule = {}): PropertyDecorator {
  const min = rule.min ?? 0;
  const max = rule.max ?? Number.MAX_SAFE_INTEGER;
  return wireField(
    {
      oneOf: [
        { type: 'integer', minimum: min, maximum: max },
        { type: 'string', pattern: '^-?\\d{1,16}$', description: 'the same integer written in digits' },
      ],
    },
    (v) => {
      const n = intOf(v);
      if (typeof n !== 'number') return n;
      return n < min || n > max ? invalid(`must be from ${min} to ${max}`) : null;
    },
    rule,
  );
}

export function boolOf(v: unknown): boolean | undefined {
  if (v === true || v === 'true') return true;
  if (v === false || v === 'false') return false;
  return undefined;
}

/** A flag: true/false or "true"/"false". */
export function Bool(rule: Presence = {}): PropertyDecorator {
  return wireField(
    { oneOf: [{ type: 'boolean' }, { type: 'string', enum: ['true', 'false'] }] },
    (v) => (boolOf(v) === undefined ? invalid('must be true or false') : null),
    { example: false, ...rule },
  );
}

/** Any other rule on one field, with its own wire code (card rules, numeric text, URLs). */
export function Check(doc: ApiPropertyOptions, check: FieldCheck, rule: Presence = {}): PropertyDecorator {
  return wireField(doc, check, rule);
}

/** @nestjs/swagger resolves a class lazily only from a function named "type". */
function lazy(cls: () => new () => object) {
  const type = () => cls();
  return type;
}

/** An object validated by its own class; its fields' paths continue this one's. */
export function Nested(cls: () => new () => object, rule: Presence = {}): PropertyDecorator {
  return (target: object, key: string | symbol) => {
    wireField({ type: lazy(cls) }, (v) => (isPlainObject(v) ? null : invalid('must be an object')), rule)(target, key);
    shapeOf(target, String(key)).nested = cls;
    ValidateNested()(target, key);
  };
}

/** A list of objects, each validated by its class; a non-object element is named by its index. */
export function NestedList(cls: () => new () => object, rule: Presence & { maxItems: number; what: string }): PropertyDecorator {
  return (target: object, key: string | symbol) => {
    wireField(
      { type: lazy(cls), isArray: true, maxItems: rule.maxItems },
      (v) => {
        if (!Array.isArray(v)) return invalid(`must be an array of ${rule.what}`);
        if (v.length > rule.maxItems) return invalid(`may have at most ${rule.maxItems} entries`);
        // Each element that is not an object is named; the others are still validated.
        const bad = v.flatMap((e, i) => (isPlainObject(e) ? [] : [invalid('must be an object', `[${i}]`)]));
        return bad.length ? bad : null;
      },
      rule,
    )(target, key);
    Object.assign(shapeOf(target, String(key)), { nested: cls, maxItems: rule.maxItems });
    ValidateNested({ each: true })(target, key);
  };
}
