"""Shared fixtures: the installed command (the same wheel's binary) is the reference every Python
verdict is compared with."""

import json
import os
import pathlib
import shutil
import subprocess
import sys
from typing import Any, List, Sequence, Tuple

import pytest

REPO = pathlib.Path(os.environ.get("TOOLSCHEMA_REPO", pathlib.Path(__file__).resolve().parents[3]))
TEST_DATA = pathlib.Path(os.environ.get("TOOLSCHEMA_TEST_DATA", REPO / "target" / "test-data"))


def command() -> str:
    """The `toolschema` command installed beside this interpreter (the wheel's own)."""
    here = pathlib.Path(sys.executable).parent / "toolschema"
    found = str(here) if here.exists() else shutil.which("toolschema")
    if not found:
        raise RuntimeError("no toolschema command beside the interpreter: install the wheel")
    return found


def run(args: Sequence[str], cwd: Any = None) -> Tuple[int, str, str]:
    """Run the command; its exit code, standard output and standard error."""
    done = subprocess.run(
        [command(), *args], cwd=cwd, capture_output=True, text=True, timeout=600
    )
    return done.returncode, done.stdout, done.stderr


def jsonl(values: List[Any]) -> str:
    return "".join(json.dumps(v) + "\n" for v in values)


@pytest.fixture
def cli():
    return run
