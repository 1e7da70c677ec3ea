#!/usr/bin/env bash
# The Python module's tests (crates/toolschema-py/tests, pytest with hypothesis, and mypy on the
# stubs) against the wheel installed in a venv, run from an empty folder so nothing of the
# checkout is importable: `scripts/test-python.sh VENV` (scripts/test-packages.sh passes the
# fresh venv it installed the wheel into). The test tools come from PyPI at the versions of
# crates/toolschema-py/tests/requirements.txt. The command the Python verdicts are compared with
# is the same wheel's, beside the venv's python.
# The tests run in one worker process per core (pytest-xdist): they are independent (each
# works in its own tmp_path) and mostly CPU-bound, so one process would leave a core idle.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
venv=${1:?usage: scripts/test-python.sh VENV [PYTEST ARGS] (a venv with the toolschema wheel installed)}
shift
[ -x "$venv/bin/toolschema" ] || { echo "error: $venv has no toolschema command: install the wheel" >&2; exit 1; }
"$venv/bin/pip" install --quiet --disable-pip-version-check -r crates/toolschema-py/tests/requirements.txt
empty=$(mktemp -d "${TMPDIR:-/tmp}/toolschema-python.XXXXXX")
trap 'rm -rf "$empty"' EXIT
cd "$empty"
TOOLSCHEMA_REPO=$root TOOLSCHEMA_TEST_DATA=${TOOLSCHEMA_TEST_DATA:-$root/target/test-data} \
  PYTHONDONTWRITEBYTECODE=1 HYPOTHESIS_STORAGE_DIRECTORY=$empty/.hypothesis \
  "$venv/bin/python" -m pytest -p no:cacheprovider -q -n auto "$root/crates/toolschema-py/tests" "$@"
