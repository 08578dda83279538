# Draws the judged sample: devlint on each tree (default settings), 40 findings per project
# (seed 20261202; all when fewer), written to /tmp/judge2/<project>_sample.md for a reviewer
# who follows JUDGE.md. Trees: /tmp/trees/<name> (see docs/precision.md for how they were made).
# Usage: cd /tmp/trees && python3 sample.py "<devlint revision>"
import json, os, random, subprocess, sys
TREES = {"transformers": "transformers/transformers", "lm-evaluation-harness": "lm-evaluation-harness",
         "diffusers": "diffusers", "ao": "ao", "sglang": "sglang/sglang", "ColossalAI": "ColossalAI",
         "Megatron-LM": "Megatron-LM", "vllm": "/tmp/vllm033/vllm"}
rev = sys.argv[1]
for n, t in TREES.items():
    r = subprocess.run(["devlint", "check", "-q", "--no-cache", "--exit-zero", "--output-format", "json", t],
                       cwd="/tmp/trees", capture_output=True, text=True)
    d = json.loads(r.stdout)
    json.dump(d, open(f"/tmp/judge2/{n}.json", "w"))
    d.sort(key=lambda x: (x["filename"], x["location"]["row"], x["code"]))
    s = d if len(d) <= 40 else random.Random(20261202).sample(d, 40)
    s.sort(key=lambda x: (x["filename"], x["location"]["row"]))
    with open(f"/tmp/judge2/{n}_sample.md", "w") as f:
        f.write(f"# {n}: {len(s)} findings sampled (seed 20261202) of {len(d)} (devlint {rev}, default settings)\n\n")
        for i, x in enumerate(s, 1):
            fn = x["filename"] if os.path.isabs(x["filename"]) else os.path.join("/tmp/trees", x["filename"])
            line = open(fn, encoding="utf-8", errors="replace").read().splitlines()[x["location"]["row"] - 1].strip()
            f.write(f"{i}. `{fn}:{x['location']['row']}` {x['code']} — {x['message']}\n    line: `{line[:200]}`\n")
    print(n, len(d), len(s), flush=True)
