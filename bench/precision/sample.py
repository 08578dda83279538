# Draws the judged sample: devlint on each tree (default settings), 40 findings per project
# (all when fewer), written to OUT/<project>_sample.md for a reviewer who follows JUDGE.md.
# Trees: /tmp/trees/<name> (see docs/precision.md for how they were made).
# Usage: cd /tmp/trees && python3 sample.py "<devlint revision>" [SEED [OUT]]
# (defaults: seed 20261202, /tmp/judge2: the sample judged at 711aee8)
import json, os, random, subprocess, sys
TREES = {"transformers": "transformers/transformers", "lm-evaluation-harness": "lm-evaluation-harness",
         "diffusers": "diffusers", "ao": "ao", "sglang": "sglang/sglang", "ColossalAI": "ColossalAI",
         "Megatron-LM": "Megatron-LM", "vllm": "/tmp/vllm033/vllm"}


def _line(fn, x):
    """The reported line; in a notebook, `cell` is the 1-based number of the cell among all
    cells and the row counts within that cell (as ruff reports notebooks)."""
    if x.get("cell"):
        cell = json.load(open(fn, encoding="utf-8"))["cells"][x["cell"] - 1]
        src = cell["source"]
        lines = ("".join(src) if isinstance(src, list) else src).splitlines()
    else:
        lines = open(fn, encoding="utf-8", errors="replace").read().splitlines()
    return lines[x["location"]["row"] - 1].strip()


rev = sys.argv[1]
seed = int(sys.argv[2]) if len(sys.argv) > 2 else 20261202
out = sys.argv[3] if len(sys.argv) > 3 else "/tmp/judge2"
os.makedirs(out, exist_ok=True)
for n, t in TREES.items():
    r = subprocess.run(["devlint", "check", "-q", "--no-cache", "--exit-zero", "--output-format", "json", t],
                       cwd="/tmp/trees", capture_output=True, text=True)
    d = json.loads(r.stdout)
    json.dump(d, open(f"{out}/{n}.json", "w"))
    d.sort(key=lambda x: (x["filename"], x["location"]["row"], x["code"]))
    s = d if len(d) <= 40 else random.Random(seed).sample(d, 40)
    s.sort(key=lambda x: (x["filename"], x["location"]["row"]))
    with open(f"{out}/{n}_sample.md", "w") as f:
        f.write(f"# {n}: {len(s)} findings sampled (seed {seed}) of {len(d)} (devlint {rev}, default settings)\n\n")
        for i, x in enumerate(s, 1):
            fn = x["filename"] if os.path.isabs(x["filename"]) else os.path.join("/tmp/trees", x["filename"])
            line = _line(fn, x)
            where = f"{fn}:cell {x['cell']}:{x['location']['row']}" if x.get("cell") else f"{fn}:{x['location']['row']}"
            f.write(f"{i}. `{where}` {x['code']} — {x['message']}\n    line: `{line[:200]}`\n")
    print(n, len(d), len(s), flush=True)
