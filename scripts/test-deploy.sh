#!/usr/bin/env bash
# Tests deploy/ and the Dockerfile (scripts/test.sh runs it; needs what that script installs and
# builds: .venv with kubernetes-validate, interop/node_modules, target/debug/toolschema, kubectl,
# promtool):
#
#   - the PrometheusRule is the rules file deploy/prometheus/toolschema-rules.yml, generated;
#   - `kubectl kustomize` renders each overlay of deploy/kubernetes/overlays/, and the result is
#     what deploy/kubernetes/rendered/ holds, so the plain manifests never drift from the sources;
#   - the rendered manifests validate against the Kubernetes schemas of the current releases
#     (PyPI kubernetes-validate, offline, strict: unknown fields fail);
#   - the ServiceMonitor and PrometheusRule validate against the Prometheus Operator's CRD schemas
#     (npm @kubernetes-models/prometheus-operator, through interop/validate-crds.mjs);
#   - scripts/check-deploy.py: what no schema checks (the flags are the proxy's, ports, probes,
#     Secrets and files agree; the pod is non-root, read-only, without capabilities; the
#     ServiceMonitor and PrometheusRule, which no Kubernetes schema covers; the Dockerfile builds
#     what scripts/package.sh builds, on a base with every library the binary needs; its
#     instructions are Docker's and what it copies is in the build context);
#   - the proxy accepts the settings file the ConfigMap carries;
#   - each Deployment's command line runs here in front of a real server (check-deploy.py run):
#     tokens, host names, a valid call served, an invalid one refused, SIGTERM;
#   - `promtool check rules` and `promtool test rules` on the alert rules;
#   - the recipe's `kubectl create secret` runs (client side, `--dry-run=client -o yaml`) and
#     makes the Secret the manifests read, with every key they read;
#   - `--write` run in a scratch copy of what it writes restores what was broken there;
#   - and each check fails on a manifest, a rule or a Dockerfile broken on purpose.
#
#   ./scripts/test-deploy.sh            check
#   ./scripts/test-deploy.sh --write    regenerate the PrometheusRule and deploy/kubernetes/rendered/
#                                       (only that: run the script again to check them)
#
# `docker build` is not run: the test machines have no Docker engine.
# shellcheck source=scripts/usage.sh
source "$(dirname "$0")/usage.sh"
set -euo pipefail
cd "$(dirname "$0")/.."

write=false
if [ "${1:-}" = --write ]; then
  write=true
elif [ $# -gt 0 ]; then
  echo "usage: $0 [--write]" >&2
  exit 2
fi
# The releases the manifests must be valid for: the three newest kubernetes-validate bundles,
# and 1.30, the first whose pods run a preStop `sleep` (the base uses one) by default.
KUBERNETES_VERSIONS="1.30.0 1.35.0 1.36.0 1.37.0"
toolschema=${TOOLSCHEMA_BIN:-${CARGO_TARGET_DIR:-target}/debug/toolschema}
python=.venv/bin/python
overlays=(upstream listen-command)

# --write needs kubectl alone.
$write || for needed in "$python" .venv/bin/kubernetes-validate "$toolschema" \
  interop/node_modules/@kubernetes-models/prometheus-operator; do
  if [ ! -e "$needed" ]; then
    echo "test-deploy: $needed is missing; run ./scripts/test.sh (it installs and builds it)" >&2
    exit 2
  fi
done
$write || for needed in kubectl promtool readelf node; do
  if ! command -v "$needed" >/dev/null; then
    echo "test-deploy: $needed is not on PATH; scripts/test.sh installs it (Debian packages" \
      "kubernetes-client, prometheus, binutils)" >&2
    exit 2
  fi
done
# Debian's kubernetes-client (1.20) embeds kustomize v2, which cannot read `patches` or
# `replicas`: these files need the kustomize of kubectl 1.27 or later (v5).
kustomize_version=$(kubectl version --client 2>/dev/null | sed -n 's/^Kustomize Version: v\([0-9]*\).*/\1/p')
if [ -z "$kustomize_version" ] || [ "$kustomize_version" -lt 5 ]; then
  echo "test-deploy: $(command -v kubectl) embeds kustomize ${kustomize_version:-older than v4}," \
    "which cannot render deploy/kubernetes/ (it needs kustomize v5: kubectl 1.27 or later)." \
    "Put a newer kubectl first on PATH." >&2
  exit 1
fi

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failed=0
problem() {
  echo "test-deploy: $*" >&2
  failed=1
}

# The PrometheusRule: the rules file under `spec:`, its own leading comments left out.
prometheus_rule() {
  printf '%s\n' \
    "# Generated from deploy/prometheus/toolschema-rules.yml by scripts/test-deploy.sh --write:" \
    "# edit that file, not this one (the test fails when they differ)." \
    "apiVersion: monitoring.coreos.com/v1" \
    "kind: PrometheusRule" \
    "metadata:" \
    "  name: toolschema-proxy" \
    "  labels:" \
    "    app.kubernetes.io/name: toolschema-proxy" \
    "spec:"
  sed -e '/^#/d' -e '/./s/^/  /' deploy/prometheus/toolschema-rules.yml
}

# An overlay as plain manifests (a file of deploy/kubernetes/rendered/).
render() {
  printf '%s\n' \
    "# Rendered by \`kubectl kustomize deploy/kubernetes/overlays/$1\` (scripts/test-deploy.sh" \
    "# --write): edit the kustomize sources, not this file."
  kubectl kustomize "deploy/kubernetes/overlays/$1"
}

echo "==> PrometheusRule from the rules file"
prometheus_rule >"$scratch/prometheusrule.yaml"
if $write; then
  cp "$scratch/prometheusrule.yaml" deploy/kubernetes/base/prometheusrule.yaml
elif ! diff -u deploy/kubernetes/base/prometheusrule.yaml "$scratch/prometheusrule.yaml"; then
  problem "deploy/kubernetes/base/prometheusrule.yaml is not generated from the rules file:" \
    "run ./scripts/test-deploy.sh --write"
fi

echo "==> kubectl kustomize (kustomize v$kustomize_version)"
for overlay in "${overlays[@]}"; do
  render "$overlay" >"$scratch/$overlay.yaml"
  if $write; then
    cp "$scratch/$overlay.yaml" "deploy/kubernetes/rendered/$overlay.yaml"
  elif ! diff -u "deploy/kubernetes/rendered/$overlay.yaml" "$scratch/$overlay.yaml"; then
    problem "deploy/kubernetes/rendered/$overlay.yaml differs from what kubectl kustomize" \
      "renders: run ./scripts/test-deploy.sh --write"
  fi
done

if $write; then
  echo "wrote deploy/kubernetes/base/prometheusrule.yaml and deploy/kubernetes/rendered/:" \
    "run ./scripts/test-deploy.sh to check them"
  exit 0
fi

# The book's example of an overlay of your own (docs/src/recipes/kubernetes.md, the YAML block
# headed `# kustomization.yaml`) renders, with its URL and image in place of the examples'.
echo "==> the recipe's own overlay"
# As the page has it: the repository checked out beside the overlay, as ../toolschema.
mkdir -p "$scratch/own"
ln -s "$PWD" "$scratch/toolschema"
awk '/^# kustomization.yaml$/ { keep = 1 } keep && /^```$/ { exit } keep' \
  docs/src/recipes/kubernetes.md >"$scratch/own/kustomization.yaml"
if ! kubectl kustomize "$scratch/own" >"$scratch/own.yaml"; then
  problem "the recipe's overlay does not render"
elif ! grep -q 'value: http://my-server.tools.svc.cluster.local:8000/mcp' "$scratch/own.yaml" ||
  ! grep -q 'image: registry.internal/toolschema:0.1.0' "$scratch/own.yaml" ||
  grep -q 'mcp-server.tools.svc' "$scratch/own.yaml"; then
  problem "the recipe's overlay does not set its upstream URL and image"
fi

# --write, run as the page shows it in a scratch copy of what it reads and writes (never in the
# checkout), with its outputs broken there first: it must write back the committed files.
echo "==> ./scripts/test-deploy.sh --write, in a scratch copy"
copy=$scratch/write-copy
mkdir -p "$copy/scripts"
cp scripts/test-deploy.sh scripts/usage.sh "$copy/scripts/"
cp -R deploy "$copy/deploy"
rm "$copy/deploy/kubernetes/rendered/upstream.yaml"
echo "# stale" >>"$copy/deploy/kubernetes/rendered/listen-command.yaml"
sed -i 's/^  name: toolschema-proxy$/  name: stale/' "$copy/deploy/kubernetes/base/prometheusrule.yaml"
if ! (cd "$copy" && ./scripts/test-deploy.sh --write) >"$scratch/write.txt" 2>&1; then
  problem "./scripts/test-deploy.sh --write failed in a scratch copy: $(cat "$scratch/write.txt")"
elif ! diff -r deploy "$copy/deploy"; then
  problem "./scripts/test-deploy.sh --write did not write back the committed files"
fi

# The recipe's Secret, made client side from a tokens file and a scrape token as the page
# says: it is the Secret the manifests mount and scrape with, and holds every key they read.
echo "==> kubectl create secret (client side), against the manifests"
mkdir -p "$scratch/secret"
printf 'alice:%s\nprometheus:%s\n' "$(head -c 24 /dev/urandom | base64)" scrape-token-example \
  >"$scratch/secret/tokens"
echo scrape-token-example >"$scratch/secret/scrape-token"
# The command line is the page's (docs/src/recipes/kubernetes.md), made offline.
if ! (cd "$scratch/secret" && kubectl create secret generic toolschema-proxy-tokens --from-file=tokens=./tokens --from-file=scrape-token=./scrape-token --dry-run=client -o yaml) \
  >"$scratch/secret.yaml"; then
  problem "kubectl create secret (--dry-run=client) failed"
else
  for overlay in "${overlays[@]}"; do
    "$python" - "$scratch/secret.yaml" "$scratch/$overlay.yaml" "$scratch/secret" <<'EOF' ||
import base64, pathlib, sys, yaml
secret = yaml.safe_load(open(sys.argv[1]))
files = pathlib.Path(sys.argv[3])
name = secret["metadata"]["name"]
if secret["kind"] != "Secret":
    sys.exit(f"kubectl made a {secret['kind']}, not a Secret")
data = {k: base64.b64decode(v) for k, v in secret["data"].items()}
for key, value in data.items():
    if value != (files / key).read_bytes():
        sys.exit(f"the Secret's key {key} does not hold the file {key}")
# Every key of this Secret the manifests read: a volume's items, a ServiceMonitor's credentials.
read = set()
def walk(node):
    if isinstance(node, dict):
        if node.get("secretName") == name:
            read.update(item["key"] for item in node.get("items", []))
        if node.get("name") == name and "key" in node:
            read.add(node["key"])
        for value in node.values():
            walk(value)
    elif isinstance(node, list):
        for value in node:
            walk(value)
for document in yaml.safe_load_all(open(sys.argv[2])):
    walk(document)
if not read:
    sys.exit(f"{sys.argv[2]} reads no key of the Secret {name}")
if read - set(data):
    sys.exit(f"{sys.argv[2]} reads keys {sorted(read - set(data))} the Secret {name} lacks")
print(f"{name}: keys {sorted(data)}; {sys.argv[2].rsplit('/', 1)[-1]} reads {sorted(read)}")
EOF
      problem "$overlay: the recipe's Secret is not the one the manifests read"
  done
fi

# Run the checks on the files as rendered now.

validate() {
  local file=$1 version
  for version in $KUBERNETES_VERSIONS; do
    .venv/bin/kubernetes-validate --strict --quiet --no-warn -k "$version" "$file" || return 1
  done
}
"$toolschema" proxy --help >"$scratch/help.txt"
echo "==> kubernetes-validate --strict, Kubernetes $KUBERNETES_VERSIONS"
for overlay in "${overlays[@]}"; do
  validate "$scratch/$overlay.yaml" || problem "$overlay: the manifests do not validate"
done
# The custom resources, as JSON for the validator: exactly the two the base holds.
validate_crds() {
  "$python" - "$1" "$scratch/crds.json" <<'EOF' && node interop/validate-crds.mjs "$scratch/crds.json"
import json, sys, yaml
objects = [d for d in yaml.safe_load_all(open(sys.argv[1]))
           if d and d.get("kind") in ("ServiceMonitor", "PrometheusRule")]
if len(objects) != 2:
    sys.exit(f"{sys.argv[1]}: expected a ServiceMonitor and a PrometheusRule, found {len(objects)}")
json.dump(objects, open(sys.argv[2], "w"))
EOF
}
echo "==> Prometheus Operator CRD schemas (npm @kubernetes-models/prometheus-operator)"
for overlay in "${overlays[@]}"; do
  validate_crds "$scratch/$overlay.yaml" || problem "$overlay: the custom resources do not validate"
done
echo "==> scripts/check-deploy.py"
for overlay in "${overlays[@]}"; do
  "$python" scripts/check-deploy.py manifests "$overlay" "$scratch/$overlay.yaml" "$scratch/help.txt" ||
    problem "$overlay: scripts/check-deploy.py failed"
done
"$python" scripts/check-deploy.py docker "$toolschema" || problem "the Dockerfile: scripts/check-deploy.py failed"

# The ConfigMap's settings file: the proxy starts with it (and exits when its stdin closes),
# or exits 2 saying what is wrong in it.
echo "==> the proxy reads deploy/kubernetes/base/toolschema.toml"
if ! "$toolschema" proxy --config deploy/kubernetes/base/toolschema.toml \
  --upstream http://127.0.0.1:9/mcp </dev/null; then
  problem "toolschema proxy does not accept deploy/kubernetes/base/toolschema.toml"
fi

echo "==> each Deployment's command line, run here (scripts/check-deploy.py run)"
for overlay in "${overlays[@]}"; do
  "$python" scripts/check-deploy.py run "$overlay" "$scratch/$overlay.yaml" "$toolschema" ||
    problem "$overlay: the Deployment's command line does not serve as it should"
done

echo "==> promtool check rules, promtool test rules"
promtool check rules deploy/prometheus/toolschema-rules.yml || problem "promtool check rules failed"
promtool test rules deploy/prometheus/toolschema-rules.test.yml || problem "promtool test rules failed"

# Each check must catch what it is for: broken copies must fail it.
echo "==> each check fails on a broken copy"
must_fail() {
  local what=$1
  shift
  if "$@" >"$scratch/out.txt" 2>&1; then
    problem "a broken copy passed: $what"
    cat "$scratch/out.txt" >&2
  else
    # The first line that says why (not the lines about what is valid or not checked).
    echo "ok, refused: $what ($(grep -E 'ERROR|check-deploy|FAILED|error|must ' "$scratch/out.txt" |
      grep -v -E ': valid$|not in this binary|not checked' | head -1))"
  fi
}
broken="$scratch/broken.yaml"
# A copy of the upstream overlay's manifests with a sed script applied, which must change it.
mutate() {
  sed "$1" "$scratch/upstream.yaml" >"$broken"
  if cmp -s "$broken" "$scratch/upstream.yaml"; then
    problem "the sed script '$1' changed nothing: fix this test"
  fi
}
# Each row: the check, a sed script that breaks the upstream overlay's manifests, what it breaks.
while IFS='|' read -r check script what; do
  mutate "$script"
  case $check in
    schemas) must_fail "$what" validate "$broken" ;;
    crds) must_fail "$what" validate_crds "$broken" ;;
    manifests) must_fail "$what" "$python" scripts/check-deploy.py manifests upstream "$broken" "$scratch/help.txt" ;;
    run) must_fail "$what" "$python" scripts/check-deploy.py run upstream "$broken" "$toolschema" ;;
    *) problem "unknown check $check in the table below" ;;
  esac
done <<'EOF'
schemas|s/^  maxUnavailable: 1$/  maxUnavailable: [1]/|a PodDisruptionBudget's maxUnavailable a list
schemas|s/readOnlyRootFilesystem: true/readOnlyRootFileSystem: true/|a misspelt securityContext field (strict schema)
crds|s/^    interval: 30s$/    interval: 30 seconds/|a ServiceMonitor interval Prometheus cannot read
crds|s/^      for: 10m$/      for: ten minutes/|a PrometheusRule 'for' Prometheus cannot read
manifests|/^            - ALL$/d; s/^\(            \)drop:$/\1drop: []/|capabilities not dropped
manifests|s/--listen=0.0.0.0:8080/--listen-address=0.0.0.0:8080/|a flag toolschema proxy does not have
manifests|s/--metrics=0.0.0.0:9464/--metrics=0.0.0.0:9465/|--metrics on a port the ServiceMonitor does not scrape
manifests|s/^  replicas: 3$/  replicas: 1/|one replica in front of an upstream
manifests|s/> 0.2$/> 0.5/|a PrometheusRule that is not the rules file
run|s/^    deny = \["\*"\]$/    deny = []/|a settings file that lets the scraper's token call tools
run|/--header=Authorization: Bearer/d|no --header: the upstream gets no token
EOF
# Each alert made never to fire: the rules test must notice.
for alert in $(sed -n 's/^ *- alert: //p' deploy/prometheus/toolschema-rules.yml); do
  mkdir -p "$scratch/rules-$alert"
  "$python" - "$alert" "$scratch/rules-$alert/toolschema-rules.yml" <<'EOF'
import sys, yaml
alert, out = sys.argv[1], sys.argv[2]
rules = yaml.safe_load(open("deploy/prometheus/toolschema-rules.yml"))
for group in rules["groups"]:
    for rule in group["rules"]:
        if rule.get("alert") == alert:
            rule["expr"] = "vector(1) == 0"
yaml.safe_dump(rules, open(out, "w"))
EOF
  cp deploy/prometheus/toolschema-rules.test.yml "$scratch/rules-$alert/"
  must_fail "$alert never firing" promtool test rules "$scratch/rules-$alert/toolschema-rules.test.yml"
done
# A Dockerfile that builds another profile than scripts/package.sh, or from a tree without
# Cargo.lock: the copies go where check-deploy.py reads them (its repository root).
mkdir -p "$scratch/repo/scripts" "$scratch/repo/crates/toolschema-cli" "$scratch/repo/deploy/kubernetes/base"
cp scripts/check-deploy.py scripts/package.sh "$scratch/repo/scripts/"
cp Cargo.toml Cargo.lock .dockerignore "$scratch/repo/"
cp crates/toolschema-cli/Cargo.toml "$scratch/repo/crates/toolschema-cli/"
cp deploy/kubernetes/base/deployment.yaml "$scratch/repo/deploy/kubernetes/base/"
git -C "$scratch/repo" init --quiet && git -C "$scratch/repo" add -A
sed 's/--profile packaged/--profile release/' Dockerfile >"$scratch/repo/Dockerfile"
must_fail "a Dockerfile building another profile" "$python" "$scratch/repo/scripts/check-deploy.py" docker "$toolschema"
sed 's/^COPY \. \.$/COPY src .\/src/' Dockerfile >"$scratch/repo/Dockerfile"
must_fail "a Dockerfile copying a path the build context lacks" "$python" "$scratch/repo/scripts/check-deploy.py" docker "$toolschema"
sed 's/^COPY \. \.$/COPPY . ./' Dockerfile >"$scratch/repo/Dockerfile"
must_fail "a Dockerfile with an instruction docker does not know" "$python" "$scratch/repo/scripts/check-deploy.py" docker "$toolschema"
sed 's/^target\/$/*.lock/' .dockerignore >"$scratch/repo/.dockerignore"
cp Dockerfile "$scratch/repo/Dockerfile"
git -C "$scratch/repo" add -A
must_fail "a .dockerignore that leaves out Cargo.lock" "$python" "$scratch/repo/scripts/check-deploy.py" docker "$toolschema"

if [ "$failed" != 0 ]; then
  echo "test-deploy: FAILED" >&2
  exit 1
fi
echo "test-deploy: all checks passed"
