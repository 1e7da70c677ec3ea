"""The Python examples of the book's Python page run, from a folder holding the repository's
examples/."""

import os
import re
import shutil
import subprocess
import sys

import pytest

from conftest import REPO

PAGE = REPO / "docs" / "src" / "library" / "python.md"
BLOCKS = re.findall(r"```python\n(.*?)```", PAGE.read_text(), re.S)


def test_the_page_has_examples():
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("block", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_each_example_runs(block, tmp_path):
    shutil.copytree(REPO / "examples", tmp_path / "examples")
    done = subprocess.run([sys.executable, "-c", block], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "PYTHONPATH": ""})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()  or "assert" in block
