"""A stand-in for $EDITOR in interactive curate tests.

Replaces the bullet's text (between the marker and the first annotation) with FAKE_EDIT_TEXT,
or writes FAKE_EDIT_RAW verbatim. FAKE_EDIT_TOUCH names a file to append a line to, as if the
person edited MEMORY.md in another window meanwhile.
"""

import os
import re
import sys

path = sys.argv[-1]
with open(path, encoding="utf-8") as fh:
    text = fh.read()
if "FAKE_EDIT_RAW" in os.environ:
    text = os.environ["FAKE_EDIT_RAW"]
elif "FAKE_EDIT_TEXT" in os.environ:
    text = re.sub(r"^- (.*?) \((added|updated)", lambda m: f"- {os.environ['FAKE_EDIT_TEXT']} ({m.group(2)}",
                  text, count=1)
with open(path, "w", encoding="utf-8") as fh:
    fh.write(text)
if os.environ.get("FAKE_EDIT_TOUCH"):
    with open(os.environ["FAKE_EDIT_TOUCH"], "a", encoding="utf-8") as fh:
        fh.write("- written in Obsidian while curate was waiting\n")
