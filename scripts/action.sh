#!/usr/bin/env bash
# The GitHub Action of action.yml: installs a pinned toolschema from its wheel, lints the given
# catalogs with `--format github` (annotations on the pull request's files), optionally diffs a
# checked-in snapshot against a live server, and writes a Markdown table to the job summary.
#
# Reads what a runner sets: GITHUB_WORKSPACE (the checkout; paths are relative to it),
# GITHUB_STEP_SUMMARY and GITHUB_OUTPUT (files to append to), RUNNER_TEMP, and the inputs as
# INPUT_* (action.yml maps them): INPUT_PATHS, INPUT_VERSION, INPUT_LINT_ARGS, INPUT_SNAPSHOT,
# INPUT_SERVER_URL, INPUT_SERVER_COMMAND, INPUT_FAIL_ON. pip's own PIP_* variables are honoured
# (an index of your own, or a folder of wheels with PIP_FIND_LINKS and PIP_NO_INDEX).
# Exit status: 0 when every check passed, 1 when one failed, 2 for bad inputs.
set -uo pipefail

fail_input() {
  echo "::error title=toolschema action::$*"
  exit 2
}

workspace=${GITHUB_WORKSPACE:-}
summary=${GITHUB_STEP_SUMMARY:-}
output=${GITHUB_OUTPUT:-}
[ -n "$workspace" ] && [ -d "$workspace" ] || fail_input "GITHUB_WORKSPACE is not set to a directory"
[ -n "$summary" ] || fail_input "GITHUB_STEP_SUMMARY is not set"
[ -n "$output" ] || fail_input "GITHUB_OUTPUT is not set"

paths=${INPUT_PATHS:-}
version=${INPUT_VERSION:-}
fail_on=${INPUT_FAIL_ON:-breaking}
snapshot=${INPUT_SNAPSHOT:-}
server_url=${INPUT_SERVER_URL:-}
server_command=${INPUT_SERVER_COMMAND:-}
[ -n "$paths" ] || fail_input "input 'paths' is empty: name the catalogs to lint"
[ -n "$version" ] || fail_input "input 'version' is empty: name the toolschema version to install"
# A version as PEP 440 spells one (it names a folder too): digits, letters, dots, +, !, -.
if ! [[ $version =~ ^[0-9][0-9A-Za-z.+!-]*$ ]]; then
  fail_input "input 'version' is '$version', not a version"
fi
case "$fail_on" in
  breaking | security | any) ;;
  *) fail_input "input 'fail-on' is '$fail_on': use breaking, security or any" ;;
esac
if [ -n "$server_url" ] && [ -n "$server_command" ]; then
  fail_input "inputs 'server-url' and 'server-command' are both set: give one"
fi
if [ -n "$snapshot" ] && [ -z "$server_url$server_command" ]; then
  fail_input "input 'snapshot' is set without 'server-url' or 'server-command' to compare it with"
fi
if [ -z "$snapshot" ] && [ -n "$server_url$server_command" ]; then
  fail_input "a server is given without input 'snapshot' to compare it with"
fi

# Word lists: paths and lint arguments are split on whitespace (newlines too, for YAML blocks),
# never evaluated.
words() { read -r -d '' -a "$1" <<<"$2" || true; }
words path_list "$paths"
words lint_args "${INPUT_LINT_ARGS:-}"
[ "${#path_list[@]}" -gt 0 ] || fail_input "input 'paths' names no file"

echo "::group::Install toolschema $version"
venv=${RUNNER_TEMP:-${TMPDIR:-/tmp}}/toolschema-action-$version
if [ ! -x "$venv/bin/toolschema" ]; then
  python3 -m venv "$venv" || fail_input "python3 -m venv failed: the runner needs Python 3"
  if ! "$venv/bin/pip" install --quiet --disable-pip-version-check "toolschema==$version"; then
    echo "::endgroup::"
    fail_input "pip could not install toolschema==$version"
  fi
fi
toolschema=$venv/bin/toolschema
"$toolschema" --version
echo "::endgroup::"

cd "$workspace" || fail_input "cannot enter $workspace"
status=0
row_lint=""
row_diff=""

# Lint: the annotations go to the log (the runner turns them into annotations); the counts are
# read from the same lines.
log=$(mktemp)
"$toolschema" lint --format github "${lint_args[@]}" "${path_list[@]}" >"$log" 2>&1
lint_code=$?
cat "$log"
errors=$(grep -c '^::error ' "$log")
warnings=$(grep -c '^::warning ' "$log")
notices=$(grep -c '^::notice ' "$log")
case $lint_code in
  0) lint_result="passed" ;;
  1) lint_result="failed"; status=1 ;;
  *) lint_result="error (exit $lint_code)"; status=1 ;;
esac
row_lint="| lint | \`${path_list[*]}\` | ${lint_result} | ${errors} errors, ${warnings} warnings, ${notices} notices |"
{
  echo "lint-exit-code=$lint_code"
  echo "errors=$errors"
  echo "warnings=$warnings"
  echo "notices=$notices"
} >>"$output"

diff_md=""
if [ -n "$snapshot" ]; then
  if [ -n "$server_url" ]; then
    source_args=(--url "$server_url")
    against=$server_url
  else
    words command_words "$server_command"
    source_args=(-- "${command_words[@]}")
    against=$server_command
  fi
  diff_md=$(mktemp)
  diff_err=$(mktemp)
  "$toolschema" diff "$snapshot" --format markdown --fail-on "$fail_on" "${source_args[@]}" >"$diff_md" 2>"$diff_err"
  diff_code=$?
  cat "$diff_md"
  cat "$diff_err" >&2
  # The counts line of the Markdown report: **N breaking, N security, N compatible**.
  # A report without changes says "No changes (...)" instead.
  counts=$(sed -n 's/^\*\*\([0-9]* breaking, [0-9]* security, [0-9]* compatible\)\*\*.*/\1/p' "$diff_md" | head -n1)
  if [ -z "$counts" ] && grep -q '^No changes ' "$diff_md"; then
    counts="0 breaking, 0 security, 0 compatible"
  fi
  breaking=$(printf '%s' "$counts" | sed -n 's/^\([0-9]*\) breaking.*/\1/p')
  case $diff_code in
    0) diff_result="passed" ;;
    1) diff_result="failed (fail-on $fail_on)"; status=1 ;;
    *) diff_result="error (exit $diff_code)"; status=1 ;;
  esac
  if [ "$diff_code" -le 1 ] && [ -z "$counts" ]; then
    diff_result="error (no summary in the diff report)"
    status=1
  fi
  if [ "$diff_code" -ge 2 ]; then
    echo "::error title=toolschema diff::$(head -n1 "$diff_err")"
    counts=$(head -n1 "$diff_err")
  fi
  row_diff="| diff | \`${snapshot}\` against \`${against}\` | ${diff_result} | ${counts} |"
  {
    echo "diff-exit-code=$diff_code"
    echo "breaking=${breaking:-}"
  } >>"$output"
fi

{
  echo "## toolschema"
  echo
  echo "| Check | On | Result | Findings |"
  echo "| --- | --- | --- | --- |"
  echo "$row_lint"
  [ -n "$row_diff" ] && echo "$row_diff"
  echo
  if [ -n "$diff_md" ] && [ -s "$diff_md" ]; then
    cat "$diff_md"
    echo
  fi
} >>"$summary"
echo "result=$([ "$status" -eq 0 ] && echo passed || echo failed)" >>"$output"
exit "$status"
