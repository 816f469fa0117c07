import { html } from './html';

describe('the console html helper', () => {
  it('escapes every interpolated value, in text and in attributes', () => {
    const evil = `<script>alert("x")</script>' onload='x`;
    const out = html`<p title="${evil}">${evil}</p>`.value;
    expect(out).not.toContain('<script>');
    expect(out).not.toContain(`"x"`);
    expect(out).toBe(
      '<p title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; onload=&#39;x">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; onload=&#39;x</p>',
    );
  });

  it('inserts nested html as is, joins arrays, and drops null, undefined and false', () => {
    const items = ['a&b', 'c'].map((s) => html`<li>${s}</li>`);
    // prettier-ignore
    const out = html`<ul>${items}</ul>${null}${undefined}${false}${0}`.value;
    expect(out).toBe('<ul><li>a&amp;b</li><li>c</li></ul>0');
  });
});
