"""Build the 10,000-tool benchmark catalog: the real catalogs of server-everything and
server-filesystem (as scripts/test-data.sh captures them), repeated with tools renamed to be
unique, pretty-printed (about 12 MB). Used by scripts/bench-lint.sh and scripts/bench-adapt.sh,
which ask for fewer tools in smoke mode.

    python3 scripts/bench-catalog.py CATALOGS_DIR OUT.json [TOOLS]
"""

import json
import pathlib
import sys

source, target = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
count = int(sys.argv[3]) if len(sys.argv) > 3 else 10_000
tools = []
for name in ("everything", "filesystem"):
    tools += json.loads((source / f"{name}.json").read_text())["tools"]
out = []
while len(out) < count:
    i = len(out)
    tool = dict(tools[i % len(tools)])  # keeps the key order; the name stays first
    tool["name"] = f"{tool['name']}_{i // len(tools)}"
    out.append(tool)
text = json.dumps({"tools": out}, indent=2, ensure_ascii=False) + "\n"
target.write_text(text)
print(f"{len(out)} tools, {len(text.encode()) / 1e6:.1f} MB")
