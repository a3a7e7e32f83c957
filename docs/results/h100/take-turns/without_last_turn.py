#!/usr/bin/env python3
"""The verdicts again without each set's last turn.

Usage: without_last_turn.py TURNS.jsonl   (prints paired_ratio.py's tables)
These sets ran with take_turns.py before 76813be, when a process whose runs were
all done exited at once: PyTorch's processes ended, and tore down Python and their CUDA
contexts, while the last program of the last turn (ddpscale, the order being reversed on odd
turns) was measuring. take_turns.py now gives each process one run more and stops them after
the last turn; for the sets measured before, leaving the last turn out removes what the exits
could have touched.
"""
import json
import os
import subprocess
import sys
import tempfile

PAIRED_RATIO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "scripts",
                            "analysis", "paired_ratio.py")

turns = [json.loads(line) for line in open(sys.argv[1])]
last = max(t["turn"] for t in turns)
with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as kept:
    kept.writelines(json.dumps(t) + "\n" for t in turns if t["turn"] != last)
print(f"{sys.argv[1]} without turn {last}:\n")
sys.stdout.flush()
subprocess.run([sys.executable, PAIRED_RATIO, kept.name], check=True)
os.unlink(kept.name)
