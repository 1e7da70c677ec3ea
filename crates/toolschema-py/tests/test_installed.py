"""The module is the installed wheel's, with the command of the same version beside it."""

import pydoc
import subprocess
import sys
import textwrap

import toolschema
from conftest import REPO, command, run


def test_the_module_is_the_installed_wheels_not_the_checkouts():
    assert "site-packages" in toolschema.__file__
    assert str(REPO) not in toolschema.__file__


def test_the_command_and_the_module_share_one_version():
    code, out, _ = run(["--version"])
    assert code == 0
    assert out.startswith(f"toolschema {toolschema.__version__} ")


def test_help_shows_the_docs():
    text = pydoc.render_doc(toolschema.Catalog, renderer=pydoc.plaintext)
    assert "A list of MCP tools" in text
    assert "validator(" in text and "compiled once" in text
    assert "from_json(" in text and "line" in text
    text = pydoc.render_doc(toolschema.Validator, renderer=pydoc.plaintext)
    assert "UncheckedError" in text


def test_mypy_accepts_a_program_using_the_stubs(tmp_path):
    program = tmp_path / "program.py"
    program.write_text(textwrap.dedent('''
        from typing import List
        import toolschema

        catalog = toolschema.Catalog.from_json('{"tools": []}')
        names: List[str] = catalog.names
        errors: List[toolschema.ArgumentError] = []
        if "search" in catalog:
            validator = catalog.validator("search", unknown_arguments="reject")
            errors = validator.validate({"query": "x"})
        messages: List[str] = [e.message for e in errors]
        findings = toolschema.lint(catalog, select=["ALL"])
        line: int = findings[0].line if findings else 0
        changes = toolschema.diff(catalog, catalog)
        lock: str = toolschema.pin(catalog, "key")
        try:
            toolschema.verify(catalog, lock, "key")
        except toolschema.LockError as e:
            print(e)
    '''))
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", str(program)],
        capture_output=True, text=True, cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    # And a wrong use is caught: the stubs are read, not ignored.
    program.write_text("import toolschema\nn: int = toolschema.Catalog.from_json('{}').names\n")
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", str(program)],
        capture_output=True, text=True, cwd=tmp_path,
    )
    assert done.returncode == 1 and "List[str]" in done.stdout.replace("list[str]", "List[str]"), done.stdout
