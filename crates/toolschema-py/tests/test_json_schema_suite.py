"""The official JSON Schema Test Suite through the Python API agrees with the command: for each
group, the command judges the instances (`validate --schema --instances`, the suite's remotes as
`--document`s) and `toolschema.validate_value` judges the same values given as Python objects;
verdicts and messages must be the same, and each verdict must be the suite's."""

import json
import os
import pathlib
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict, List, Tuple

import pytest

import toolschema
from conftest import TEST_DATA, jsonl, run

SUITE = TEST_DATA / "json-schema-test-suite"


def remotes() -> Dict[str, Any]:
    root = SUITE / "remotes"
    found = {}
    for path in sorted(root.rglob("*.json")):
        relative = path.relative_to(root).as_posix()
        found[f"http://localhost:1234/{relative}"] = json.loads(path.read_text())
    return found


def python_record(schema: Any, value: Any, dialect: str, documents: Dict[str, Any]) -> Dict[str, Any]:
    # A str given as the value is its JSON text: a JSON string goes as its text.
    value = json.dumps(value) if isinstance(value, str) else value
    try:
        errors = toolschema.validate_value(schema, value, dialect=dialect, documents=documents)
    except toolschema.UncheckedError as e:
        return {"valid": False, "messages": str(e).split("\n"), "unchecked": True}
    return {"valid": not errors, "messages": [e.message for e in errors], "unchecked": False}


@pytest.mark.parametrize("draft,dialect", [("draft2020-12", "2020-12"), ("draft7", "draft-07")])
def test_the_suite_agrees_with_the_command(draft: str, dialect: str, tmp_path: pathlib.Path):
    files = sorted((SUITE / "tests" / draft).glob("*.json"))
    assert files, f"no suite in {SUITE}: run scripts/test-data.sh"
    documents = remotes()
    document_args = []
    for i, (uri, document) in enumerate(documents.items()):
        path = tmp_path / f"remote-{i}.json"
        path.write_text(json.dumps(document))
        document_args.append(f"--document={uri}={path}")
    groups = [(file, group) for file in files for group in json.loads(file.read_text())]

    def judged_by_the_command(i: int, group: Dict[str, Any]) -> Tuple[int, str, str]:
        schema_file = tmp_path / f"schema-{i}.json"
        instances_file = tmp_path / f"instances-{i}.jsonl"
        schema_file.write_text(json.dumps(group["schema"]))
        instances_file.write_text(jsonl([t["data"] for t in group["tests"]]))
        # The remotes only for the groups that name them (reading 100 documents per run is
        # most of a run's time); the module gets the same.
        remote = "localhost:1234" in json.dumps(group["schema"])
        return run(
            ["validate", "--dialect", dialect, "--schema", str(schema_file),
             "--instances", str(instances_file), *(document_args if remote else [])]
        )

    tests = 0
    disagreements: List[str] = []
    # One run of the command per group, a few at a time in threads while this one compares: a
    # thread waiting on its process leaves the interpreter free. Results come back in order.
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        runs = pool.map(judged_by_the_command, range(len(groups)), [g for _, g in groups])
        for (file, group), (code, out, err) in zip(groups, runs):
            remote = "localhost:1234" in json.dumps(group["schema"])
            records = [json.loads(line) for line in out.splitlines()]
            assert len(records) == len(group["tests"]), f"{file.name}: {err}"
            for test, record in zip(group["tests"], records):
                tests += 1
                where = f"{file.name} / {group['description']} / {test['description']}"
                ours = python_record(group["schema"], test["data"], dialect, documents if remote else {})
                theirs = [e["message"] for e in record["errors"]]
                if (ours["valid"], ours["messages"]) != (record["valid"], theirs):
                    disagreements.append(f"{where}: python {ours}, command {record}")
                if ours["valid"] != test["valid"]:
                    disagreements.append(f"{where}: python says valid={ours['valid']}")
                if ours["unchecked"]:
                    disagreements.append(f"{where}: could not be checked: {ours['messages']}")
    print(f"{draft}: {tests} tests through Python and the command")
    assert tests > 1000 if draft == "draft2020-12" else tests > 800
    assert not disagreements, "\n".join(disagreements[:20])
