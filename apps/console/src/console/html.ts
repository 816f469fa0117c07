import escapeHtml from 'escape-html';

/** Markup that is already escaped (built by `html`), inserted as is by another `html`. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

type Part = SafeHtml | string | number | boolean | null | undefined | Date | readonly Part[];

function render(v: Part): string {
  if (v === null || v === undefined || v === false) return '';
  if (v instanceof SafeHtml) return v.value;
  if (Array.isArray(v)) return v.map(render).join('');
  if (v instanceof Date) return escapeHtml(v.toISOString());
  return escapeHtml(String(v));
}

/**
 * The console's only way to make markup: every interpolated value is HTML-escaped (escape-html:
 * & < > " ') unless it is itself the result of `html`. Attribute values must be quoted.
 */
export function html(strings: TemplateStringsArray, ...values: Part[]): SafeHtml {
  let out = strings[0];
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1];
  return new SafeHtml(out);
}
