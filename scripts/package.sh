#!/usr/bin/env bash
# Builds every package of toolschema into target/dist/, from one build of the binary (cargo's
# `packaged` profile: release with thin LTO, stripped):
#   toolschema-VERSION-cp39-abi3-manylinux_*.whl  the PyPI wheel: the `toolschema` command (the
#                                                binary, in the wheel's data scripts/) and the
#                                                Python module `import toolschema` (maturin,
#                                                PyO3 abi3, crates/toolschema-py/pyproject.toml)
#   toolschema-VERSION.tar.gz                    the PyPI sdist (builds the Python module with
#                                                cargo; the command then comes from cargo install)
#   toolschema-VERSION.tgz                       the npm launcher package (npm/toolschema)
#   toolschema-cli-PLATFORM-VERSION.tgz          the npm package of this machine's platform,
#                                                holding the wheel's own binary and the Node
#                                                module toolschema.node (crates/toolschema-node),
#                                                which the launcher package's lib/ loads
# The tools (maturin, auditwheel) come from PyPI into target/dist-tools, a venv of the script's
# own (packaging/requirements.txt). The commit the binary names in `--version` is the checkout's
# HEAD. Only this machine's platform is built: the other npm platform packages and wheels need a
# machine of that kind.
#
# TOOLSCHEMA_PACKAGE_PROFILE=dev builds the same packages from the `dev` profile (stripped), which
# reuses what `cargo build` already compiled: scripts/test.sh does so to test the packages as
# users install them without compiling the whole tree again in release. Packages to publish, and
# the install and Python benchmarks, use the default, `packaged`.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
dist=$root/target/dist
tools=$root/target/dist-tools

say() { printf '==> %s\n' "$*"; }

say "packaging tools (target/dist-tools)"
if [ ! -x "$tools/bin/python" ]; then
  python3 -m venv "$tools"
fi
"$tools/bin/pip" install --quiet --disable-pip-version-check -r packaging/requirements.txt

# The version line's commit: also for builds git cannot read the checkout of (build.rs prefers it).
if commit=$(git rev-parse HEAD 2>/dev/null); then
  export TOOLSCHEMA_BUILD_COMMIT=$commit
fi

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n1)
npm_version=$(node -p 'require("./npm/toolschema/package.json").version')
hooks_version=$(sed -n 's/^dependencies = \["toolschema==\(.*\)"\]$/\1/p' pyproject.toml)
action_version=$(sed -n '/^  version:$/,/default:/s/^    default: "\(.*\)"$/\1/p' action.yml)
for pair in "npm/toolschema/package.json:$npm_version" "pyproject.toml (the hooks' dependency):$hooks_version" \
  "action.yml (input version):$action_version"; do
  if [ "${pair##*:}" != "$version" ]; then
    echo "error: Cargo.toml says version $version, ${pair%:*} says '${pair##*:}'" >&2
    exit 1
  fi
done

rm -rf "$dist"
mkdir -p "$dist"

# The wheel's data scripts/ folder (crates/toolschema-py/pyproject.toml's `data`): made empty
# first, so the sdist never carries a binary of this machine.
data=$root/target/wheel-data
rm -rf "$data"
mkdir -p "$data/scripts"

say "sdist (the Python module; no binary)"
"$tools/bin/maturin" sdist -m crates/toolschema-py/Cargo.toml --out "$dist"

profile=${TOOLSCHEMA_PACKAGE_PROFILE:-packaged}
case "$profile" in
  packaged) out_dir=target/packaged ;;
  dev) out_dir=target/debug ;;
  *) echo "error: TOOLSCHEMA_PACKAGE_PROFILE is 'packaged' or 'dev', not '$profile'" >&2; exit 1 ;;
esac

say "the command (cargo, profile $profile)"
start=$(date +%s)
# The Node module in the same cargo run: one build of the core for both.
cargo build --quiet --locked --profile "$profile" -p toolschema-cli -p toolschema-node
cp "$out_dir/toolschema" "$data/scripts/toolschema"
chmod 755 "$data/scripts/toolschema"
node_module=$root/target/toolschema.node
cp "$out_dir/libtoolschema_node.so" "$node_module"
if [ "$profile" = dev ]; then
  # The packaged profile strips its binary; a dev one carries hundreds of MiB of debug info.
  strip "$data/scripts/toolschema"
  strip --strip-unneeded "$node_module"
fi
echo "built in $(( $(date +%s) - start ))s"

say "wheel (maturin, profile $profile; manylinux checked by maturin's auditwheel check)"
start=$(date +%s)
# The pyproject.toml beside the crate (the root's is the pre-commit hooks' package). `pypi`: a
# tag PyPI accepts (manylinux, the lowest the module's and the binary's symbols allow), or a
# failure.
"$tools/bin/maturin" build --quiet --locked -m crates/toolschema-py/Cargo.toml \
  --profile "$profile" --strip --compatibility pypi --auditwheel check --out "$dist"
echo "built in $(( $(date +%s) - start ))s"
wheels=("$dist"/toolschema-"$version"-*.whl)
if [ "${#wheels[@]}" -ne 1 ] || [ ! -f "${wheels[0]}" ]; then
  echo "error: expected one wheel in $dist, found: ${wheels[*]}" >&2
  exit 1
fi
wheel=${wheels[0]}
case "$(basename "$wheel")" in
  *-cp39-abi3-manylinux*) ;;
  *) echo "error: $(basename "$wheel") is not a cp39-abi3-manylinux wheel, which PyPI needs" >&2; exit 1 ;;
esac
"$tools/bin/auditwheel" show "$wheel"
# One wheel, both halves: the command and the module.
"$tools/bin/python" - "$wheel" <<'PY'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
for want in (".data/scripts/toolschema", "toolschema/__init__.py", "toolschema/__init__.pyi",
             "toolschema/py.typed", "toolschema/_toolschema.abi3.so"):
    if not any(n.endswith(want) for n in names):
        sys.exit(f"error: the wheel has no {want}: {names}")
PY

say "npm packages"
# This machine's npm platform key (linux-x64-gnu, ...), as the launcher computes it.
key=$(node -p 'require("./npm/toolschema/bin/toolschema.js").platformKey() || ""')
if [ -z "$key" ]; then
  echo "error: no npm platform package is declared for this machine (see npm/toolschema/bin/toolschema.js)" >&2
  exit 1
fi
stage=$dist/npm-stage
mkdir -p "$stage/launcher/bin" "$stage/cli-$key"
cp npm/toolschema/package.json "$stage/launcher/"
cp npm/toolschema/bin/toolschema.js "$stage/launcher/bin/"
cp npm/toolschema/README.md "$stage/launcher/"
# The Node module's JavaScript layer and its declarations (the native part is in the platform
# package, beside the binary).
mkdir -p "$stage/launcher/lib"
cp npm/toolschema/lib/index.js npm/toolschema/lib/sdk.js "$stage/launcher/lib/"
cp npm/toolschema/index.d.ts npm/toolschema/sdk.d.ts "$stage/launcher/"
# The binary inside the wheel: the npm package carries the very bytes pip installs.
"$tools/bin/python" - "$wheel" "$stage/cli-$key/toolschema" <<'PY'
import sys, zipfile
wheel, out = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    names = [n for n in z.namelist() if n.endswith(".data/scripts/toolschema")]
    if len(names) != 1:
        sys.exit(f"error: expected one toolschema binary in {wheel}, found {names}")
    with z.open(names[0]) as src, open(out, "wb") as dst:
        dst.write(src.read())
PY
chmod 755 "$stage/cli-$key/toolschema"
cp "$node_module" "$stage/cli-$key/toolschema.node"
node - "$stage/cli-$key" "$key" <<'JS'
// The platform package's manifest: name, version and metadata from the launcher's, and the
// os/cpu/libc fields npm installs it by.
const fs = require("node:fs");
const path = require("node:path");
const [dir, key] = process.argv.slice(2);
const launcher = JSON.parse(fs.readFileSync("npm/toolschema/package.json", "utf8"));
const { PLATFORMS } = require(path.resolve("npm/toolschema/bin/toolschema.js"));
const p = PLATFORMS[key];
const manifest = {
  name: `@toolschema/cli-${key}`,
  version: launcher.version,
  description: `The toolschema binary and Node module for ${key} (installed by the toolschema package)`,
  license: launcher.license,
  repository: launcher.repository,
  homepage: launcher.homepage,
  os: [p.os],
  cpu: [p.cpu],
  ...(p.libc ? { libc: [p.libc] } : {}),
  files: [p.os === "win32" ? "toolschema.exe" : "toolschema", "toolschema.node"],
  preferUnplugged: true,
};
fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify(manifest, null, 2) + "\n");
fs.writeFileSync(
  path.join(dir, "README.md"),
  `# ${manifest.name}\n\nThe \`toolschema\` binary and Node module (\`toolschema.node\`) for ${key}. Install \`toolschema\` instead: its launcher and \`require("toolschema")\` find this package.\n`,
);
JS
(cd "$stage/launcher" && npm pack --silent --pack-destination "$dist" >/dev/null)
(cd "$stage/cli-$key" && npm pack --silent --pack-destination "$dist" >/dev/null)
rm -rf "$stage"

# The commit the binaries name, for the package tests (HEAD may have moved since).
printf '%s\n' "${TOOLSCHEMA_BUILD_COMMIT:-}" >"$dist/built-from-commit.txt"

say "artifacts"
ls -l "$dist" | sed 1d
