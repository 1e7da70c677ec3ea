#!/usr/bin/env python3
"""Offline link check of the built book and of Markdown files that link into it.

Usage: check-links.py BOOK_HTML_DIR [MARKDOWN_FILE ...]

In the built HTML, every relative link must name a file that exists and, when it has a
#fragment, an element with that id in it. In each Markdown file given (the README, docs/MOVED.md),
every relative link must name a file that exists, read from the file's own folder; a link to a
book page (docs/src/*.md) with a #fragment must name an id of that page as built. Run it from the
repository's root. Links with a scheme (https:, mailto:) are not followed: the check runs
offline. Exits 1 listing each broken link.
"""
import os
import re
import sys
from html.parser import HTMLParser
from urllib.parse import unquote, urlsplit


class Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids = set()
        self.links = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        if tag == "a" and attrs.get("name"):
            self.ids.add(attrs["name"])
        for name in ("href", "src"):
            if attrs.get(name) is not None and tag in ("a", "img"):
                self.links.append(attrs[name])


def read(path):
    page = Page()
    with open(path, encoding="utf-8") as f:
        page.feed(f.read())
    return page


def check_book(root):
    pages = {}
    for folder, _, files in os.walk(root):
        for name in files:
            if name.endswith(".html"):
                path = os.path.normpath(os.path.join(folder, name))
                pages[path] = read(path)
    broken = []
    for path, page in sorted(pages.items()):
        # print.html repeats every page with rewritten links; the pages themselves are checked.
        if os.path.basename(path) == "print.html":
            continue
        for link in page.links:
            parts = urlsplit(link)
            if parts.scheme or link.startswith("//"):
                continue
            target = path
            if parts.path:
                target = os.path.normpath(os.path.join(os.path.dirname(path), unquote(parts.path)))
            if os.path.isdir(target):
                target = os.path.join(target, "index.html")
            if not os.path.exists(target):
                broken.append(f"{os.path.relpath(path, root)}: {link}: no such file")
                continue
            if parts.fragment and target.endswith(".html"):
                ids = pages[target].ids if target in pages else read(target).ids
                if unquote(parts.fragment) not in ids:
                    broken.append(f"{os.path.relpath(path, root)}: {link}: no such anchor")
    return broken, len(pages)


LINK = re.compile(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


BOOK_SOURCE = os.path.normpath("docs/src")


def check_markdown(path, book):
    broken = []
    in_code = False
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if line.lstrip().startswith("```"):
                in_code = not in_code
            if in_code:
                continue
            for link in LINK.findall(line):
                parts = urlsplit(link)
                if parts.scheme or not parts.path:
                    continue
                target = os.path.normpath(os.path.join(os.path.dirname(path), unquote(parts.path)))
                if not os.path.exists(target):
                    broken.append(f"{path}:{number}: {link}: no such file")
                    continue
                source = os.path.relpath(target, BOOK_SOURCE)
                if parts.fragment and target.endswith(".md") and not source.startswith(".."):
                    page = os.path.join(book, source[: -len(".md")] + ".html")
                    if not os.path.exists(page) or unquote(parts.fragment) not in read(page).ids:
                        broken.append(f"{path}:{number}: {link}: no such anchor")
    return broken


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    broken, count = check_book(sys.argv[1])
    for path in sys.argv[2:]:
        broken += check_markdown(path, sys.argv[1])
    for line in broken:
        print(f"broken link: {line}")
    if broken:
        return 1
    print(f"links: {count} pages and {len(sys.argv) - 2} Markdown files checked, no broken link")
    return 0


if __name__ == "__main__":
    sys.exit(main())
