"""Runs a Markdown file's ```python blocks in order, in one namespace (as a notebook would), each compiled under the
Markdown file's name and line numbers so a traceback points at the README line that broke. Exits non-zero when one
raises; prints `ran N blocks` at the end.

    python3 clients/python/tests/run_examples.py BLOCKS.json
    (BLOCKS.json: {"file": "README.md", "blocks": [{"line": 12, "code": "..."}, ...]}, as the driving test writes it)
"""

import json
import sys
import traceback


def main(path):
    with open(path, encoding="utf-8") as handle:
        spec = json.load(handle)
    namespace = {"__name__": "__main__"}
    for number, block in enumerate(spec["blocks"], 1):
        # Padding puts each line of the block at its line number in the Markdown file.
        source = "\n" * (block["line"] - 1) + block["code"]
        try:
            exec(compile(source, spec["file"], "exec"), namespace)
        except BaseException:
            traceback.print_exc()
            print("example %d of %s (line %d) failed" % (number, spec["file"], block["line"]), file=sys.stderr)
            sys.exit(1)
        sys.stdout.flush()
    print("ran %d blocks" % len(spec["blocks"]))


if __name__ == "__main__":
    main(sys.argv[1])
