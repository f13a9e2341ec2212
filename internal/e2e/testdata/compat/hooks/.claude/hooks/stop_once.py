#!/usr/bin/env python3
"""Claude Code Stop hook: ask for the tests once, then let the agent stop."""
import json
import sys

data = json.load(sys.stdin)
if data.get("stop_hook_active"):
    sys.exit(0)
print(json.dumps({"decision": "block", "reason": "Run the tests before you stop."}))
