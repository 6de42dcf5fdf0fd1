"""A stand-in for an LLM CLI in `curate --with` tests: reads candidates, answers bullets.

FAKE_CURATOR_MODE picks the answer: "rewrite" (default), "fail", "garbage", "multiline",
"unknown-key", "secret". FAKE_CURATOR_SAVE names a file to save the payload to.
"""

import json
import os
import sys

data = json.load(sys.stdin)
if os.environ.get("FAKE_CURATOR_SAVE"):
    with open(os.environ["FAKE_CURATOR_SAVE"], "w", encoding="utf-8") as fh:
        json.dump(data, fh)
mode = os.environ.get("FAKE_CURATOR_MODE", "rewrite")
cands = data["candidates"]
if mode == "fail":
    sys.stderr.write("model is unavailable\n")
    sys.exit(3)
if mode == "garbage":
    print("Sure! Here are your bullets:")
    sys.exit(0)
if mode == "multiline":
    print(json.dumps({"bullets": [{"key": cands[0]["key"], "text": "two\nlines"}]}))
    sys.exit(0)
if mode == "unknown-key":
    print(json.dumps({"bullets": [{"key": "p999", "text": "anything at all"}]}))
    sys.exit(0)
if mode == "secret":
    print(json.dumps({"bullets": [{"key": cands[0]["key"], "text": "token ghp_" + "a" * 36}]}))
    sys.exit(0)

out = []
for c in cands:
    if c["kind"] == "update" and "light mode" in c["text"]:
        out.append({"key": c["key"], "text": "Prefers light mode", "was": "dark mode"})
atlas = [c["key"] for c in cands if c["kind"] == "add" and any("Atlas" in e["content"] for e in c["entries"])]
if len(atlas) >= 2:
    out.append({"keys": atlas, "text": "Atlas: SQLite prototype; CI takes about 14 minutes",
                "section": "Active Projects"})
print(json.dumps({"bullets": out}))
