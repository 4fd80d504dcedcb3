#!/usr/bin/env python3
"""Checks that the repository's Markdown stands on its own.

Every relative link in a tracked (or, outside git, any) *.md file must resolve to a file or folder
inside the repository, and a link with an #anchor into a Markdown file must name a heading there.
Links that leave the repository (http(s) URLs or paths above its root) are errors: the docs a user
needs must ship with the code. Exit 0 when all links hold, 1 with one line per broken link.

  tools/check_docs.py [REPO_ROOT]
"""
import os
import re
import subprocess
import sys

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~)")


def markdown_files(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "*.md"], check=True,
                             capture_output=True, text=True).stdout.split()
        if out:
            return [os.path.join(root, p) for p in out]
    except (OSError, subprocess.CalledProcessError):
        pass
    found = []
    for base, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in ("build", "node_modules", ".git")]
        found += [os.path.join(base, f) for f in files if f.endswith(".md")]
    return sorted(found)


def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    result = set()
    in_fence = False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if FENCE.match(line):
                in_fence = not in_fence
            elif not in_fence and line.startswith("#"):
                result.add(slug(line.lstrip("#")))
    return result


def links(path):
    in_fence = False
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if FENCE.match(line):
                in_fence = not in_fence
                continue
            if in_fence:
                continue
            for match in LINK.finditer(re.sub(r"`[^`]*`", "", line)):
                yield number, match.group(1)


def check(root):
    root = os.path.realpath(root)
    problems = []
    for path in markdown_files(root):
        for number, target in links(path):
            where = f"{os.path.relpath(path, root)}:{number}"
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                problems.append(f"{where}: {target} leaves the repository")
                continue
            file_part, _, anchor = target.partition("#")
            resolved = os.path.realpath(os.path.join(os.path.dirname(path), file_part)) \
                if file_part else path
            if not (resolved == root or resolved.startswith(root + os.sep)):
                problems.append(f"{where}: {target} points outside the repository")
            elif not os.path.exists(resolved):
                problems.append(f"{where}: {target} does not exist")
            elif anchor and resolved.endswith(".md") and anchor not in anchors(resolved):
                problems.append(f"{where}: {target} names no heading in {os.path.basename(resolved)}")
    return problems


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    problems = check(root)
    for problem in problems:
        print(problem)
    if problems:
        print(f"check_docs: {len(problems)} broken link(s)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
