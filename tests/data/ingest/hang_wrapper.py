"""A wrapper that hangs the way a shell script around an LLM CLI does: it starts a child that
never answers, writes the child's pid to argv[1], and waits for it."""

import subprocess
import sys

child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
with open(sys.argv[1], "w", encoding="utf-8") as f:
    f.write(str(child.pid))
child.wait()
