#!/usr/bin/env python3
"""Claude Code PreToolUse hook: steer the agent from grep/find to ripgrep.

Reads the hook input on stdin; exit code 2 blocks the Bash call and shows stderr
to the model.
"""
import json
import re
import sys

RULES = [
    (r"\bgrep\b(?!.*\|)", "Use 'rg' (ripgrep) instead of 'grep' for better performance and features"),
    (r"\bfind\s+\S+\s+-name\b", "Use 'rg --files -g pattern' instead of 'find -name'"),
]


def issues(command):
    return [msg for pattern, msg in RULES if re.search(pattern, command)]


try:
    data = json.load(sys.stdin)
except json.JSONDecodeError as e:
    print(f"Error: invalid JSON input: {e}", file=sys.stderr)
    sys.exit(1)

if data.get("tool_name") != "Bash":
    sys.exit(1)
command = data.get("tool_input", {}).get("command", "")
if not command:
    sys.exit(1)

found = issues(command)
if found:
    for msg in found:
        print(f"• {msg}", file=sys.stderr)
    sys.exit(2)
