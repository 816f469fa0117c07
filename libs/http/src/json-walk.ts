import { DomainError, ErrorCodes } from '@app/contracts';
import { render, Segment } from './json-path';

// Step 4 of parseJsonBody (json-body.ts), after JSON.parse: an explicit stack, each container once.

const C0 = /[\u0000-\u001f]/;

declare global {
  interface String {
    /** ES2024, on Node 20: false when the string holds a lone surrogate. */
    isWellFormed(): boolean;
  }
}

interface Frame {
  node: object;
  parent: Frame | undefined;
  key: Segment;
}

/**
 * Refuses what the api must never store or look up; `checkStrings` false skips the string checks
 * (for a text without a backslash, which cannot hold a control character or a lone surrogate).
 */
export function walk(value: unknown, checkStrings = true): void {
  if (value === null || typeof value !== 'object') {
    checkScalar(value, undefined, null, checkStrings, true);
    return;
  }
  const stack: Frame[] = [{ node: value, parent: undefined, key: null }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    const node = frame.node;
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const v: unknown = node[i];
        if (v !== null && typeof v === 'object') stack.push({ node: v, parent: frame, key: i });
        else checkScalar(v, frame, i, checkStrings, false);
      }
    } else {
      const obj = node as Record<string, unknown>;
      const keys = Object.keys(obj);
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i];
        if (key === '__proto__' || key === 'constructor' || key === 'prototype') {
          const param = render(pathOf(frame, key));
          throw DomainError.validation(ErrorCodes.InvalidField, param, `${param} is not an accepted member name.`);
        }
        if (checkStrings && !textOk(key)) {
          const param = render(pathOf(frame, null));
          throw DomainError.validation(
            ErrorCodes.InvalidField,
            param,
            `A member name (${param}) holds a control character or an unpaired surrogate.`,
          );
        }
        const v = obj[key];
        if (v !== null && typeof v === 'object') stack.push({ node: v, parent: frame, key });
        else checkScalar(v, frame, key, checkStrings, false);
      }
    }
  }
}

function checkScalar(v: unknown, parent: Frame | undefined, key: Segment, checkStrings: boolean, root: boolean): void {
  if (typeof v === 'string') {
    if (!checkStrings) return;
    if (C0.test(v)) {
      const param = root ? 'body' : render(pathOf(parent!, key));
      throw DomainError.validation(ErrorCodes.InvalidField, param, `${param} must not contain control characters (U+0000 to U+001F).`);
    }
    if (!v.isWellFormed()) {
      const param = root ? 'body' : render(pathOf(parent!, key));
      throw DomainError.validation(ErrorCodes.InvalidField, param, `${param} holds an unpaired surrogate: it is not valid Unicode text.`);
    }
  } else if (typeof v === 'number') {
    if (!Number.isFinite(v)) {
      const param = root ? 'body' : render(pathOf(parent!, key));
      throw DomainError.validation(ErrorCodes.InvalidField, param, `${param} must be a finite number.`);
    }
    if (Number.isInteger(v) && !Number.isSafeInteger(v)) {
      const param = root ? 'body' : render(pathOf(parent!, key));
      throw DomainError.validation(
        ErrorCodes.InvalidField,
        param,
        `${param} is an integer beyond 2^53 - 1 that cannot be kept exactly; send it as a string.`,
      );
    }
  }
}

function textOk(s: string): boolean {
  return !C0.test(s) && s.isWellFormed();
}

function pathOf(frame: Frame, last: Segment): Segment[] {
  const segments: Segment[] = [last];
  for (let f: Frame | undefined = frame; f?.parent !== undefined; f = f.parent) segments.push(f.key);
  return segments.reverse();
}
