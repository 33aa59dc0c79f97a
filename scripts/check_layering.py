#!/usr/bin/env python3
"""Checks that every folder includes only what its layer may include.

The rules live in docs/architecture.md, in the ```layering block: one line
per folder, "folder: what it may include", where an entry is a folder
(anything under it) or one header ("proto/field_numbers.h"). Headers with no
folder (the generated rooftrace_version.h) and system headers are always
allowed; tests/ and bench/ may include anything.

Usage: check_layering.py [ROOT]      (ROOT defaults to the repository)
Exit 0 when every include is allowed; 1 with one line per violation
("file:line: libinject/ may not include collector/x.h (allowed: ...)");
2 when the rules cannot be read.
"""
import os
import re
import sys

SOURCE_SUFFIXES = (".h", ".cc", ".cu", ".cpp", ".hpp")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def read_rules(root):
    path = os.path.join(root, "docs", "architecture.md")
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise SystemExit(f"check_layering: {path}: {e.strerror}; the layering "
                         "rules live in its ```layering block") from None
    block = re.search(r"```layering\n(.*?)```", text, re.S)
    if not block:
        print(f"check_layering: {path} has no ```layering block",
              file=sys.stderr)
        sys.exit(2)
    rules = {}
    for line in block.group(1).splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        folder, _, allowed = line.partition(":")
        rules[folder.strip()] = allowed.split()
    return rules


def allowed(include, entries):
    for entry in entries:
        if entry.endswith(".h"):
            if include == entry:
                return True
        elif include.startswith(entry + "/"):
            return True
    return False


def check(root):
    rules = read_rules(root)
    violations = []
    for folder, entries in sorted(rules.items()):
        top = os.path.join(root, folder)
        for dirpath, _, files in os.walk(top):
            for name in sorted(files):
                if not name.endswith(SOURCE_SUFFIXES):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                with open(path, encoding="utf-8", errors="replace") as f:
                    for n, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        inc = m.group(1)
                        if "/" not in inc:
                            continue  # generated header at the include root
                        if not allowed(inc, entries):
                            violations.append(
                                f"{rel}:{n}: {folder}/ may not include {inc} "
                                f"(allowed: {' '.join(entries)}; "
                                "docs/architecture.md)")
    return violations


def main(argv):
    root = argv[1] if len(argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..")
    violations = check(root)
    for v in violations:
        print(v)
    if violations:
        print(f"check_layering: {len(violations)} include(s) break the "
              "layering", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
