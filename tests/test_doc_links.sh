#!/usr/bin/env bash
# Every link of the documentation resolves: in README.md and docs/*.md,
# each relative link [text](path), [text](path#anchor), image ![alt](path)
# and reference definition [ref]: path must name a file of the source
# tree, and each #anchor (also a bare one, into the same page) a heading
# of its target Markdown file, by GitHub's rule (the heading's text
# lowercased, punctuation other than '-' and '_' removed, spaces turned
# into '-'; a repeated heading gets -1, -2, ...) or an explicit
# <a name=...>/id=... in it. Links inside code (fenced blocks, `spans`)
# are not links. Absolute links (http:, https:, mailto:) are not checked:
# no network; DOC_LINKS_VERBOSE=1 lists them.
#   tests/test_doc_links.sh [SOURCE_DIR]
# Exits 0 when every link resolves, 1 listing each broken one as
# FILE:LINE: TARGET: why.
set -euo pipefail
src=${1:-$(dirname "$0")/..}
cd "$src"
command -v python3 >/dev/null || { echo "test_doc_links: python3 is needed" >&2; exit 1; }
files=(README.md)
for f in docs/*.md; do
  [ -e "$f" ] && files+=("$f")
done
exec python3 - "${files[@]}" <<'EOF'
import os
import re
import sys
import urllib.parse

FENCE = re.compile(r'^\s{0,3}(`{3,}|~{3,})')
ATX = re.compile(r'^\s{0,3}(#{1,6})(?:\s+(.*?))?\s*$')
SETEXT = re.compile(r'^\s{0,3}(=+|-+)\s*$')
# [text](target "title"): text may span lines and hold `code` or brackets
# one level deep; the target stops at whitespace or ')'.
INLINE = re.compile(r'!?\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\(\s*<?([^)\s>]*)>?(?:\s+(?:"[^"]*"|\'[^\']*\'))?\s*\)')
REFDEF = re.compile(r'^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s.*)?$')
HTMLID = re.compile(r'<a\s[^>]*\b(?:name|id)\s*=\s*"([^"]+)"', re.I)


def code_masked(lines):
    """The lines with fenced code blanked and inline code spans replaced by
    spaces of the same length, so that positions and line numbers hold."""
    out, fence = [], None
    for line in lines:
        m = FENCE.match(line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
            out.append('')
            continue
        if m:
            fence = m.group(1)
            out.append('')
            continue
        out.append(re.sub(r'(`+)(.+?)\1', lambda c: ' ' * len(c.group(0)), line))
    return out


def slug(text):
    """GitHub's anchor of a heading's text."""
    text = re.sub(r'!?\[([^\]]*)\]\([^)]*\)', r'\1', text)   # links: their text
    text = re.sub(r'<[^>]+>', '', text)                      # inline HTML
    text = text.replace('`', '')
    text = text.strip().lower()
    text = re.sub(r'[^\w\- ]', '', text)
    return text.replace(' ', '-')


anchors_cache = {}


def anchors(path):
    if path in anchors_cache:
        return anchors_cache[path]
    with open(path, encoding='utf-8') as f:
        raw = f.read().split('\n')
    seen, found, fence, prev = {}, set(), None, ''
    for line in raw:
        m = FENCE.match(line)
        if fence or m:
            if fence and m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
            elif not fence and m:
                fence = m.group(1)
            prev = ''
            continue
        for a in HTMLID.findall(line):
            found.add(a)
        text = None
        h = ATX.match(line)
        if h:
            text = re.sub(r'\s+#+\s*$', '', h.group(2) or '')
        elif SETEXT.match(line) and prev.strip() and not prev.lstrip().startswith(('|', '-', '*', '>')):
            text = prev.strip()
        if text is not None:
            s = slug(text)
            n = seen.get(s, 0)
            seen[s] = n + 1
            found.add(s if n == 0 else '%s-%d' % (s, n))
        prev = line
    anchors_cache[path] = found
    return found


broken, checked, external = [], 0, []
for doc in sys.argv[1:]:
    with open(doc, encoding='utf-8') as f:
        lines = f.read().split('\n')
    masked = code_masked(lines)
    text = '\n'.join(masked)
    starts = [0]
    for line in masked:
        starts.append(starts[-1] + len(line) + 1)

    def line_of(pos):
        lo, hi = 0, len(starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if starts[mid] <= pos:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1

    targets = [(line_of(m.start(2)), m.group(2)) for m in INLINE.finditer(text)]
    targets += [(i + 1, m.group(1)) for i, l in enumerate(masked) for m in [REFDEF.match(l)] if m]
    for lineno, target in targets:
        if re.match(r'^[a-zA-Z][a-zA-Z0-9+.-]*:', target):
            external.append('%s:%d: %s' % (doc, lineno, target))
            continue
        checked += 1
        path, _, anchor = target.partition('#')
        path = urllib.parse.unquote(path)
        if path:
            dest = os.path.normpath(os.path.join(os.path.dirname(doc), path))
            if dest.startswith('..'):
                broken.append('%s:%d: %s: outside the source tree' % (doc, lineno, target))
                continue
            if not os.path.exists(dest):
                broken.append('%s:%d: %s: no such file (%s)' % (doc, lineno, target, dest))
                continue
        else:
            dest = doc
        if not anchor:
            continue
        if os.path.isdir(dest) or not dest.endswith('.md'):
            broken.append('%s:%d: %s: an anchor into a file that is not Markdown' % (doc, lineno, target))
            continue
        if urllib.parse.unquote(anchor) not in anchors(dest):
            broken.append('%s:%d: %s: no heading with anchor #%s in %s' % (doc, lineno, target, anchor, dest))

if os.environ.get('DOC_LINKS_VERBOSE') == '1':
    for e in external:
        print('not checked: ' + e)
for b in broken:
    print(b)
print('test_doc_links: %d links checked in %d files, %d broken, %d absolute not checked'
      % (checked, len(sys.argv) - 1, len(broken), len(external)))
sys.exit(1 if broken else 0)
EOF
