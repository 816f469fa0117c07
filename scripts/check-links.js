#!/usr/bin/env node
// npm run lint's link check: every relative link in the README and the markdown under docs/,
// test/ and bench/ names a file that exists, and an anchor names a heading of that page (GitHub's
// slugs). Offline by design: links to other sites are not fetched. A link into ../shared (notes
// outside the project) is refused: a reader of the project cannot follow it.
const { readFileSync, readdirSync, existsSync, statSync } = require('node:fs');
const { dirname, join, relative, resolve } = require('node:path');

const root = resolve(__dirname, '..');
// The vendored SDKs' own files (test/simulators/sdk) are theirs, not ours to check.
const SKIP = new Set(['node_modules', 'dist', '.git', '.logs', '.data', 'src']);

function markdownUnder(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    if (SKIP.has(e.name)) return [];
    const p = join(dir, e.name);
    return e.isDirectory() ? markdownUnder(p) : e.name.endsWith('.md') ? [p] : [];
  });
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
const slug = (heading) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/<[^>]+>/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

const anchorsCache = new Map();
function anchorsOf(file) {
  if (!anchorsCache.has(file)) {
    const seen = new Map();
    const text = readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '');
    const anchors = new Set();
    for (const m of text.matchAll(/^#{1,6}\s+(.*?)\s*#*$/gm)) {
      const base = slug(m[1].replace(/`/g, ''));
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      anchors.add(n ? `${base}-${n}` : base);
    }
    for (const m of text.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) anchors.add(m[1]);
    anchorsCache.set(file, anchors);
  }
  return anchorsCache.get(file);
}

const files = [join(root, 'README.md'), ...['docs', 'test', 'bench'].flatMap((d) => markdownUnder(join(root, d)))];
const problems = [];
for (const file of files) {
  const text = readFileSync(file, 'utf8')
    .replace(/```[\s\S]*?```/g, '')
    .replace(/`[^`\n]*`/g, '');
  for (const m of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    const target = m[1];
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
    const [path, anchor] = target.split('#');
    const to = path ? resolve(dirname(file), decodeURI(path)) : file;
    const where = `${relative(root, file)}: (${target})`;
    if (!to.startsWith(root + '/') && to !== root) problems.push(`${where} leaves the project`);
    else if (!existsSync(to)) problems.push(`${where} names a file that does not exist`);
    else if (anchor && statSync(to).isFile() && to.endsWith('.md') && !anchorsOf(to).has(decodeURIComponent(anchor)))
      problems.push(`${where} names no heading of ${relative(root, to)}`);
  }
}
if (problems.length) {
  console.error(`${problems.length} broken link(s):\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log(`links: ${files.length} markdown files checked`);
