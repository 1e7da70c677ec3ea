"""Checks of `toolschema adapt` against the providers' own SDKs and against other converters.

    python interop/adapt_check.py genai ADAPTED.json
        Load every tool of `toolschema adapt --to gemini|gemini-openapi` output (a list of tools,
        or {"tools": [...]}) into google-genai's FunctionDeclaration model; exit 1 naming each
        declaration the SDK refuses.

    python interop/adapt_check.py differential CASES.json [CATALOG.json ...] --toolschema BIN [--json]
        Run the same input schemas through `toolschema adapt` and through the converters people
        use: openai-agents' ensure_strict_json_schema and pydantic-ai's OpenAI (strict) and Google
        (parametersJsonSchema, OpenAPI parameters) transformers. For each schema and target, say
        where each one fails, stays non-strict, changes what the schema accepts without a word,
        or drops a keyword without a report. Prints a Markdown table, or JSON with --json.

Installed by scripts/test.sh (interop/requirements.txt, pinned). Nothing here reaches the network.
"""

from __future__ import annotations

import argparse
import copy
import json
import subprocess
import sys
import tempfile
from pathlib import Path

# Keywords each provider documents (the same lists the Rust tests' provider_rules hold).
STRICT_KEYWORDS = {
    "type", "properties", "required", "additionalProperties", "items", "enum", "const", "anyOf",
    "$ref", "$defs", "description", "title", "pattern", "format", "minLength", "maxLength",
    "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum", "minItems",
    "maxItems",
}
STRICT_FORMATS = {
    "date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid",
}
GEMINI_KEYWORDS = {
    "$id", "$defs", "$ref", "$anchor", "type", "format", "title", "description", "enum", "items",
    "prefixItems", "minItems", "maxItems", "minimum", "maximum", "anyOf", "oneOf", "properties",
    "additionalProperties", "required", "propertyOrdering",
}
# Keywords whose absence changes no verdict (annotations): dropping them is still a loss of
# what the model reads, so they count as dropped too, but not as a change of meaning.
SCHEMA_MAPS = {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
SCHEMA_LISTS = {"anyOf", "allOf", "oneOf", "prefixItems"}
SCHEMA_SINGLE = {
    "items", "additionalProperties", "unevaluatedProperties", "not", "if", "then", "else",
    "contains", "propertyNames", "additionalItems", "unevaluatedItems",
}


def subschemas(schema, pointer=""):
    """Every schema object with its JSON Pointer."""
    if not isinstance(schema, dict):
        return
    yield pointer, schema
    for key, value in schema.items():
        here = f"{pointer}/{key}"
        if key in SCHEMA_MAPS and isinstance(value, dict):
            for name, sub in value.items():
                yield from subschemas(sub, f"{here}/{name}")
        elif key in SCHEMA_LISTS and isinstance(value, list):
            for i, sub in enumerate(value):
                yield from subschemas(sub, f"{here}/{i}")
        elif key in SCHEMA_SINGLE:
            if isinstance(value, list):
                for i, sub in enumerate(value):
                    yield from subschemas(sub, f"{here}/{i}")
            else:
                yield from subschemas(value, here)


def keyword_counts(schema):
    counts = {}
    for _, node in subschemas(schema):
        for key in node:
            counts[key] = counts.get(key, 0) + 1
    return counts


def descriptions(schema):
    return " ".join(
        node["description"] for _, node in subschemas(schema)
        if isinstance(node.get("description"), str)
    )


def keyword_values(schema, keyword):
    return [node[keyword] for _, node in subschemas(schema) if keyword in node]


def shown(value):
    """The words a value is written with in a description."""
    if isinstance(value, list):
        return [w for v in value for w in shown(v)]
    if isinstance(value, dict):
        return []
    return [json.dumps(value) if not isinstance(value, str) else value]


def silent_drops(original, output):
    """Keywords the output uses fewer times than the input with no word of them left: neither the
    keyword nor its values in any description, nor (for const) the value in an enum."""
    text = descriptions(output).lower()
    enums = [v for values in keyword_values(output, "enum") if isinstance(values, list) for v in values]
    silent = []
    for keyword in keyword_drops(original, output):
        if keyword.lower() in text:
            continue
        values = keyword_values(original, keyword)
        words = [w.lower() for v in values for w in shown(v) if w]
        if words and all(w in text for w in words):
            continue
        if keyword == "const" and all(v in enums for v in values):
            continue  # written as a one-value enum: same meaning
        silent.append(keyword)
    return silent


def admits_null(schema):
    if not isinstance(schema, dict):
        return schema is True
    t = schema.get("type")
    if t == "null" or (isinstance(t, list) and "null" in t):
        return True
    if schema.get("nullable") is True:
        return True
    return any(admits_null(b) for b in schema.get("anyOf", []) if isinstance(b, dict))


def newly_required_without_null(original, output):
    """Properties optional in the input that the output requires and that cannot be null: the
    model must invent a value for what the caller meant to leave out."""
    found = []
    originals = dict(subschemas(original))
    for pointer, node in subschemas(output):
        source = originals.get(pointer)
        if not isinstance(source, dict) or not isinstance(node.get("properties"), dict):
            continue
        before = set(source.get("required", []))
        for name in node.get("required", []):
            if name in before or name not in source.get("properties", {}):
                continue
            if not admits_null(node["properties"].get(name)):
                found.append(f"{pointer}/properties/{name}")
    return found


def narrowed_objects(original, output):
    """Objects that took keys they do not declare (a free-form object, a map) and that the output
    closes: the model can then send only what is declared, often nothing."""
    found = []
    originals = dict(subschemas(original))
    for pointer, node in subschemas(output):
        source = originals.get(pointer)
        if not isinstance(source, dict) or node.get("additionalProperties") is not False:
            continue
        is_object = source.get("type") == "object" or "properties" in source
        open_before = source.get("additionalProperties", True) is not False
        composed = any(k in source for k in ("allOf", "anyOf", "oneOf", "$ref"))
        if is_object and open_before and not composed and not source.get("properties"):
            found.append(pointer or "/")
    return found


def strict_problems(schema):
    """What OpenAI strict mode refuses in a schema."""
    problems = root_problems(schema)
    for pointer, node in subschemas(schema):
        for key in node:
            if key not in STRICT_KEYWORDS:
                problems.append(f"{pointer}: {key}")
        fmt = node.get("format")
        if isinstance(fmt, str) and fmt not in STRICT_FORMATS:
            problems.append(f"{pointer}: format {fmt}")
        is_object = node.get("type") == "object" or "properties" in node
        if is_object:
            if node.get("additionalProperties") is not False:
                problems.append(f"{pointer}: not closed")
            if set(node.get("properties", {})) - set(node.get("required", [])):
                problems.append(f"{pointer}: optional properties")
        if node.get("type") == "array":
            items = node.get("items")
            if not (isinstance(items, dict) and any(k in items for k in ("type", "$ref", "anyOf", "enum", "const"))):
                problems.append(f"{pointer}: untyped items")
    return problems


def root_problems(schema):
    """Every provider wants an object root without composition."""
    if schema.get("type") != "object" or any(k in schema for k in ("anyOf", "oneOf", "allOf")):
        return ["root is not a plain object"]
    return []


def gemini_problems(schema):
    problems = root_problems(schema)
    for pointer, node in subschemas(schema):
        for key in node:
            if key not in GEMINI_KEYWORDS:
                problems.append(f"{pointer}: {key}")
        required = node.get("required", [])
        declared = node.get("properties", {})
        for name in required if isinstance(required, list) else []:
            if name not in declared:
                problems.append(f"{pointer}: required {name} undeclared")
    return problems


def genai_refusal(declaration):
    """Why google-genai's FunctionDeclaration model refuses a declaration, or None."""
    from google.genai import types

    try:
        types.FunctionDeclaration.model_validate(declaration)
        return None
    except Exception as error:  # the SDK raises more than ValidationError on bad types
        return f"{type(error).__name__}: {str(error).splitlines()[0]}"


def genai_main(path):
    document = json.loads(Path(path).read_text())
    tools = document["tools"] if isinstance(document, dict) else document
    refused = 0
    for tool in tools:
        why = genai_refusal(tool)
        if why:
            refused += 1
            print(f"{tool.get('name')}: {why}")
    print(f"{len(tools) - refused} of {len(tools)} declarations load in google-genai FunctionDeclaration")
    return 1 if refused else 0


# ------------------------------------------------------------------------------------------------
# The converters.


def run_agents(schema):
    from agents.strict_schema import ensure_strict_json_schema

    return ensure_strict_json_schema(copy.deepcopy(schema)), None


def run_pydantic_openai(schema):
    from pydantic_ai.profiles.openai import OpenAIJsonSchemaTransformer

    # What pydantic-ai decides on its own (strict=None), then the strict rewrite it offers.
    chooser = OpenAIJsonSchemaTransformer(copy.deepcopy(schema), strict=None)
    chooser.walk()
    output = OpenAIJsonSchemaTransformer(copy.deepcopy(schema), strict=True).walk()
    return output, chooser.is_strict_compatible


def run_pydantic_google(schema):
    from pydantic_ai.profiles.google import GoogleJsonSchemaTransformer

    return GoogleJsonSchemaTransformer(copy.deepcopy(schema)).walk(), None


def run_pydantic_google_openapi(schema):
    from pydantic_ai.profiles.google import GoogleOpenAPISchemaTransformer

    return GoogleOpenAPISchemaTransformer(copy.deepcopy(schema)).walk(), None


TARGETS = {
    "openai-strict": [("openai-agents", run_agents), ("pydantic-ai OpenAI", run_pydantic_openai)],
    "gemini": [("pydantic-ai Google", run_pydantic_google)],
    "gemini-openapi": [("pydantic-ai GoogleOpenAPI", run_pydantic_google_openapi)],
}


def judge(target, original, output, name):
    """What is wrong with a converter's output for `target`."""
    verdict = {}
    if target == "openai-strict":
        verdict["not_strict"] = strict_problems(output)
        verdict["optional_made_required"] = newly_required_without_null(original, output)
    elif target == "gemini":
        verdict["provider_refuses"] = gemini_problems(output)
    else:
        why = genai_refusal({"name": name, "parameters": output})
        verdict["genai_refuses"] = [why] if why else []
        verdict["provider_refuses"] = root_problems(output)
    verdict["narrowed"] = narrowed_objects(original, output)
    verdict["silent_drops"] = silent_drops(original, output)
    return verdict


def adapt(toolschema, tools, target):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump({"tools": tools}, f)
    done = subprocess.run(
        [toolschema, "adapt", f.name, "--to", target], capture_output=True, text=True, timeout=120
    )
    Path(f.name).unlink()
    if done.returncode not in (0, 1):
        sys.exit(f"toolschema adapt failed: {done.stderr}")
    return json.loads(done.stdout), done.stderr


def request_schema(tool):
    if "function" in tool:
        return tool["function"]["parameters"]
    return tool.get("parametersJsonSchema", tool.get("parameters"))


def differential(cases, toolschema):
    rows = []
    tools = [{"name": c["name"], "inputSchema": c["schema"]} for c in cases]
    for target, peers in TARGETS.items():
        adapted, refusals = adapt(toolschema, tools, target)
        by_name = {}
        for tool in adapted["tools"]:
            name = tool["function"]["name"] if "function" in tool else tool["name"]
            by_name[adapted["names"].get(name, name)] = tool
        for case in cases:
            name, schema = case["name"], case["schema"]
            row = {"case": name, "target": target, "results": {}}
            tool = by_name.get(name)
            if tool is None:
                reason = next(
                    (line for line in refusals.splitlines() if f"tool '{name}'" in line), "refused"
                )
                row["results"]["toolschema adapt"] = {"fails": reason}
            else:
                output = request_schema(tool)
                verdict = judge(target, schema, output, name)
                losses = [l for l in adapted["losses"] if l["tool"] == name]
                reported = {l["keyword"] for l in losses}
                verdict["silent_drops"] = [k for k in keyword_drops(schema, output) if k not in reported]
                if "additionalProperties" in reported:
                    verdict["narrowed"] = []  # closing an object is a reported loss
                verdict["losses_reported"] = len(losses)
                row["results"]["toolschema adapt"] = verdict
            for peer, convert in peers:
                try:
                    output, strict_ok = convert(schema)
                except Exception as error:
                    row["results"][peer] = {"fails": f"{type(error).__name__}: {str(error).splitlines()[0]}"}
                    continue
                verdict = judge(target, schema, output, name)
                if strict_ok is False:
                    verdict["stays_non_strict"] = True
                row["results"][peer] = verdict
            rows.append(row)
    return rows


def keyword_drops(original, output):
    before, after = keyword_counts(original), keyword_counts(output)
    shape = {"type", "properties", "required", "description", "title", "$defs", "additionalProperties"}
    return sorted(
        k for k, n in before.items()
        if (after.get(k, 0) == 0 if k in shape else after.get(k, 0) < n)
    )


def summary(verdict):
    if "fails" in verdict:
        return "fails: " + verdict["fails"]
    parts = []
    if verdict.get("stays_non_strict"):
        parts.append("stays non-strict")
    for key, label in (
        ("not_strict", "not strict"),
        ("provider_refuses", "Gemini refuses"),
        ("genai_refuses", "google-genai refuses"),
        ("optional_made_required", "optional made required without null"),
        ("narrowed", "closes an object that took any keys"),
        ("silent_drops", "drops without a word"),
    ):
        if verdict.get(key):
            parts.append(f"{label}: {', '.join(verdict[key])}")
    if "losses_reported" in verdict:
        parts.append(f"{verdict['losses_reported']} losses reported")
    return "; ".join(parts) or "ok"


def differential_main(cases_path, catalogs, toolschema, as_json):
    cases = json.loads(Path(cases_path).read_text())
    for catalog in catalogs:
        for tool in json.loads(Path(catalog).read_text())["tools"]:
            cases.append({"name": tool["name"], "schema": tool["inputSchema"]})
    rows = differential(cases, toolschema)
    if as_json:
        print(json.dumps(rows, indent=1))
        return 0
    for target in TARGETS:
        peers = ["toolschema adapt"] + [p for p, _ in TARGETS[target]]
        print(f"\n### {target}\n")
        print("| case | " + " | ".join(peers) + " |")
        print("|---" * (len(peers) + 1) + "|")
        for row in rows:
            if row["target"] != target:
                continue
            cells = [summary(row["results"][p]).replace("|", "\\|") for p in peers]
            print(f"| {row['case']} | " + " | ".join(cells) + " |")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    genai = sub.add_parser("genai")
    genai.add_argument("path")
    diff = sub.add_parser("differential")
    diff.add_argument("cases")
    diff.add_argument("catalogs", nargs="*")
    diff.add_argument("--toolschema", required=True)
    diff.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.command == "genai":
        return genai_main(args.path)
    return differential_main(args.cases, args.catalogs, args.toolschema, args.json)


if __name__ == "__main__":
    sys.exit(main())
