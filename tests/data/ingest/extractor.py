"""A stand-in LLM wrapper for `memvault ingest --with`: reads the request from stdin, answers.

Mode (argv[1]): good (the protocol example's facts), prose (not JSON), fail (exit 3),
shape (an importance out of range), object (an object, not an array), slow (sleeps).
With INGEST_SAVE set, the request is saved there for the test to read.
"""

import json
import os
import sys
import time

mode = sys.argv[1] if len(sys.argv) > 1 else "good"
request = json.load(sys.stdin)
if os.environ.get("INGEST_SAVE"):
    with open(os.environ["INGEST_SAVE"], "w", encoding="utf-8") as f:
        json.dump(request, f)
sid = request["source_id"]
facts = [
    {"type": "EPISODIC", "content": "The user's preferred title is Dr. Anya Sharma.", "source_id": f"{sid}#turn-1",
     "importance_score": 1.0, "metadata": {"speaker": "user", "kind": "preference"}, "embedding_vector": []},
    {"type": "EPISODIC", "content": "Order O-9987 was shipped via FedEx, tracking number FX555123.",
     "source_id": f"{sid}#turn-4", "importance_score": 0.8, "metadata": {"speaker": "tool", "kind": "id"}},
    {"type": "EPISODIC", "content": "The user said hello.", "source_id": f"{sid}#turn-1", "importance_score": 0.0,
     "metadata": {"speaker": "user"}},
]
if mode == "good":
    print(json.dumps(facts))
elif mode == "prose":
    print("Sure! Here are the facts I found:\n- The user's title is Dr. Anya Sharma")
elif mode == "fail":
    print("model overloaded, try again later", file=sys.stderr)
    sys.exit(3)
elif mode == "shape":
    facts[1]["importance_score"] = 8
    print(json.dumps(facts))
elif mode == "object":
    print(json.dumps({"facts": facts}))
elif mode == "slow":
    time.sleep(10)
