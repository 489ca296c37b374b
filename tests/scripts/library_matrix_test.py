#!/usr/bin/python3
"""Proves that docs/libraries.md's verdict matrix is the one the scenarios' expectations give
(scripts/library_matrix.py --check), and that the check fails on a matrix with one cell changed.

Usage: library_matrix_test.py LOCKSIM SOURCE_DIR
"""
import os
import shutil
import subprocess
import sys
import tempfile


def check(source, locksim, doc):
    return subprocess.run(["/usr/bin/python3", os.path.join(source, "scripts", "library_matrix.py"),
                           locksim, "--check", doc]).returncode


def main(argv):
    locksim, source = os.path.abspath(argv[1]), os.path.abspath(argv[2])
    doc = os.path.join(source, "docs", "libraries.md")
    failed = 0
    if check(source, locksim, doc) != 0:
        print("FAILED: docs/libraries.md's matrix is not the scenarios' expectations")
        failed += 1
    with tempfile.TemporaryDirectory() as work:
        changed = os.path.join(work, "libraries.md")
        shutil.copy(doc, changed)
        with open(changed, encoding="utf-8") as f:
            text = f.read()
        begin = text.index("<!-- library-matrix:begin -->")
        cell = text.index(" | ok |", begin)
        with open(changed, "w", encoding="utf-8") as f:
            f.write(text[:cell] + " | deadlock |" + text[cell + len(" | ok |"):])
        if check(source, locksim, changed) != 1:
            print("FAILED: a matrix with one cell changed passed the check")
            failed += 1
    print("ok" if failed == 0 else f"{failed} failure(s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
