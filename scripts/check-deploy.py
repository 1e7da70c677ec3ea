"""Checks of deploy/ that no schema makes: scripts/test-deploy.sh runs it.

    check-deploy.py manifests OVERLAY RENDERED.yaml HELP.txt
        The rendered manifests of an overlay (upstream or listen-command) hang together: the
        proxy's arguments are flags `toolschema proxy --help` knows (or the observability
        contract's), its ports, probes, files and Secrets are those the other objects name, and the
        pod runs as the Deployment promises (non-root, read-only, no capabilities). The
        ServiceMonitor and PrometheusRule (custom resources no Kubernetes schema covers) are
        checked for the fields the Prometheus Operator reads, and the rules against the rules file.
    check-deploy.py run OVERLAY RENDERED.yaml TOOLSCHEMA_BINARY
        The Deployment's command line, run here as the kubelet would run it, with its files
        (the tokens, the ConfigMap's settings) in a scratch folder and its addresses on loopback,
        in front of a real server (listen-command: PyPI mcp-server-time from .venv; upstream:
        interop/http-upstream.mjs): tokens are required, the Service's host name is answered and
        others are not, a valid call is served, an invalid one refused before the server, the
        scraper's token lists no tool, the upstream gets its token, the probes answer without a
        token before any client, /metrics exports every metric and series the alert rules read,
        SIGTERM stops the proxy with status 0.
    check-deploy.py docker TOOLSCHEMA_BINARY
        The Dockerfile's instructions are Docker's, and what it copies from the build context is
        there; it builds what scripts/package.sh builds and copies the binary from where cargo
        puts it; the distroless base has every library the binary needs; .dockerignore leaves
        out build output and installs, and nothing git tracks.

Prints one line per failure and exits 1 when there is one.
"""

import fnmatch
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import tomllib
import urllib.error
import urllib.request
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "deploy/prometheus/toolschema-rules.yml"
# Flags of `toolschema proxy` the observability contract names, built on other branches: the
# manifests may use them before this binary has them. Once `--help` lists them, they are checked
# like any other flag.
CONTRACT_FLAGS = {"--metrics", "--otlp-endpoint", "--log-format"}
# What gcr.io/distroless/cc-debian12 holds besides the dynamic loader: glibc and libgcc.
DISTROLESS_CC_LIBRARIES = {
    "libc.so.6", "libm.so.6", "libgcc_s.so.1", "libpthread.so.0", "libdl.so.2", "librt.so.1",
    "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1",
}

failures = []


def fail(message):
    failures.append(message)


def subset(selector, labels):
    return all(labels.get(k) == v for k, v in (selector or {}).items())


def help_flags(help_text):
    return set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", help_text))


def port_of(address, flag):
    match = re.fullmatch(r".*:(\d+)", address)
    if not match:
        fail(f"{flag}={address}: no port")
        return None
    return int(match.group(1))


def check_manifests(overlay, rendered, help_path):
    docs = [d for d in yaml.safe_load_all(Path(rendered).read_text()) if d]
    by_kind = {}
    for doc in docs:
        by_kind.setdefault(doc.get("kind"), []).append(doc)
    for kind in ["Deployment", "Service", "PodDisruptionBudget", "ServiceMonitor",
                 "PrometheusRule", "ConfigMap"]:
        if len(by_kind.get(kind, [])) != 1:
            fail(f"{overlay}: expected one {kind}, found {len(by_kind.get(kind, []))}")
    if failures:
        return
    deployment = by_kind["Deployment"][0]
    service = by_kind["Service"][0]
    pdb = by_kind["PodDisruptionBudget"][0]
    monitor = by_kind["ServiceMonitor"][0]
    rule = by_kind["PrometheusRule"][0]
    config_map = by_kind["ConfigMap"][0]

    spec = deployment["spec"]
    pod = spec["template"]["spec"]
    pod_labels = spec["template"]["metadata"].get("labels", {})
    if not subset(spec["selector"].get("matchLabels"), pod_labels):
        fail(f"{overlay}: the Deployment's selector does not select its own pods")

    # The pod runs as the recipe promises.
    pod_security = pod.get("securityContext", {})
    if pod_security.get("runAsNonRoot") is not True:
        fail(f"{overlay}: the pod does not set runAsNonRoot: true")
    if pod_security.get("seccompProfile", {}).get("type") != "RuntimeDefault":
        fail(f"{overlay}: the pod's seccompProfile is not RuntimeDefault")
    containers = pod["containers"]
    if len(containers) != 1:
        fail(f"{overlay}: expected one container, found {len(containers)}")
        return
    container = containers[0]
    security = container.get("securityContext", {})
    if security.get("allowPrivilegeEscalation") is not False:
        fail(f"{overlay}: the container allows privilege escalation")
    if security.get("readOnlyRootFilesystem") is not True:
        fail(f"{overlay}: the container's root filesystem is writable")
    if "ALL" not in security.get("capabilities", {}).get("drop", []):
        fail(f"{overlay}: the container does not drop ALL capabilities")
    resources = container.get("resources", {})
    for part in ["requests", "limits"]:
        for resource in ["cpu", "memory"]:
            if resource not in resources.get(part, {}):
                fail(f"{overlay}: the container has no {part}.{resource}")

    # The arguments: `proxy`, flags `toolschema proxy --help` knows, then the server.
    args = container.get("args", [])
    if container.get("command") or not args or args[0] != "proxy":
        fail(f"{overlay}: the container must run the image's entrypoint with `proxy` first")
        return
    known = help_flags(Path(help_path).read_text())
    if "--listen" not in known:
        fail(f"{help_path} does not look like `toolschema proxy --help` (no --listen)")
        return
    flags = {}
    server = None
    rest = args[1:]
    while rest:
        arg = rest.pop(0)
        if arg == "--":
            server = rest
            break
        name, eq, value = arg.partition("=")
        if not name.startswith("--"):
            fail(f"{overlay}: argument {arg!r}: write each flag as --name=value")
            continue
        if name not in known and name not in CONTRACT_FLAGS:
            fail(f"{overlay}: {name} is not a flag of `toolschema proxy` (see its --help)")
        if not eq and name not in ("--no-auth", "--audit-arguments", "--deny-unlisted"):
            fail(f"{overlay}: {name} has no =value")
        flags.setdefault(name, []).append(value)
    if overlay == "upstream":
        if server is not None or "--upstream" not in flags:
            fail("upstream: the proxy must front --upstream URL, with no command")
        if spec.get("replicas", 1) < 2:
            fail("upstream: fewer than 2 replicas: one pod's loss stops the service")
    elif overlay == "listen-command":
        if not server or "--upstream" in flags:
            fail("listen-command: the proxy must start a command after `--`, with no --upstream")
        if spec.get("replicas", 1) != 1 and service["spec"].get("sessionAffinity") != "ClientIP":
            fail("listen-command: several replicas without session affinity lose sessions")
    else:
        fail(f"unknown overlay {overlay}")

    # Ports: --listen and --metrics are the container's named ports, which the Service, the
    # probes and the ServiceMonitor name.
    ports = {p.get("name"): p["containerPort"] for p in container.get("ports", [])}
    for flag, port_name in [("--listen", "http"), ("--metrics", "metrics")]:
        values = flags.get(flag, [])
        if len(values) != 1:
            fail(f"{overlay}: expected one {flag}, found {len(values)}")
            continue
        if port_of(values[0], flag) != ports.get(port_name):
            fail(f"{overlay}: {flag}={values[0]} is not the container port {port_name!r} "
                 f"({ports.get(port_name)})")
    for probe, path in [("readinessProbe", "/readyz"), ("livenessProbe", "/healthz")]:
        get = container.get(probe, {}).get("httpGet", {})
        if get.get("path") != path or get.get("port") not in ("http", ports.get("http")):
            fail(f"{overlay}: the {probe} is not GET {path} on the http port")
    if not subset(service["spec"].get("selector"), pod_labels):
        fail(f"{overlay}: the Service does not select the pods")
    service_ports = {p.get("name"): p for p in service["spec"].get("ports", [])}
    for name in ["http", "metrics"]:
        target = service_ports.get(name, {}).get("targetPort")
        if target not in (name, ports.get(name)):
            fail(f"{overlay}: the Service's port {name!r} does not lead to the container's")
    if not subset(pdb["spec"].get("selector", {}).get("matchLabels"), pod_labels):
        fail(f"{overlay}: the PodDisruptionBudget does not select the pods")
    if "maxUnavailable" not in pdb["spec"] and "minAvailable" not in pdb["spec"]:
        fail(f"{overlay}: the PodDisruptionBudget sets no budget")

    # Files: --auth-token-file and --config lie in mounted volumes whose Secret or ConfigMap
    # holds a key of that name.
    mounts = {m["mountPath"].rstrip("/"): m["name"] for m in container.get("volumeMounts", [])}
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    secrets = set()
    for flag in ["--auth-token-file", "--config"]:
        for value in flags.get(flag, []):
            path = Path(value)
            volume = volumes.get(mounts.get(str(path.parent), ""))
            if volume is None:
                fail(f"{overlay}: {flag}={value} is in no mounted volume")
                continue
            if "configMap" in volume:
                name = volume["configMap"]["name"]
                if name != config_map["metadata"]["name"]:
                    fail(f"{overlay}: {flag}: the ConfigMap {name} is not among the manifests")
                elif path.name not in config_map.get("data", {}):
                    fail(f"{overlay}: {flag}: the ConfigMap {name} has no key {path.name}")
            elif "secret" in volume:
                items = volume["secret"].get("items")
                if items is not None and path.name not in [i["path"] for i in items]:
                    fail(f"{overlay}: {flag}: the Secret volume has no item {path.name}")
                secrets.add(volume["secret"]["secretName"])
            else:
                fail(f"{overlay}: {flag}: the volume is neither a Secret nor a ConfigMap")
    if "--auth-token-file" not in flags:
        fail(f"{overlay}: no --auth-token-file: --metrics off loopback needs the guard's tokens")

    # ServiceMonitor: the fields the Prometheus Operator reads, pointing at this Service.
    if monitor.get("apiVersion") != "monitoring.coreos.com/v1":
        fail(f"{overlay}: the ServiceMonitor's apiVersion is not monitoring.coreos.com/v1")
    monitor_spec = monitor.get("spec", {})
    if not subset(monitor_spec.get("selector", {}).get("matchLabels"),
                  service["metadata"].get("labels", {})) \
            or not monitor_spec.get("selector", {}).get("matchLabels"):
        fail(f"{overlay}: the ServiceMonitor's selector does not select the Service")
    endpoints = monitor_spec.get("endpoints", [])
    if not endpoints:
        fail(f"{overlay}: the ServiceMonitor has no endpoints")
    for endpoint in endpoints:
        if endpoint.get("port") != "metrics" or endpoint.get("path") != "/metrics":
            fail(f"{overlay}: the ServiceMonitor does not scrape /metrics on the metrics port")
        credentials = endpoint.get("authorization", {}).get("credentials", {})
        if credentials.get("name") not in secrets or not credentials.get("key"):
            fail(f"{overlay}: the ServiceMonitor's token is not from the proxy's tokens Secret")

    # PrometheusRule: the rules file, as it is.
    if rule.get("apiVersion") != "monitoring.coreos.com/v1":
        fail(f"{overlay}: the PrometheusRule's apiVersion is not monitoring.coreos.com/v1")
    if rule.get("spec") != yaml.safe_load(RULES.read_text()):
        fail(f"{overlay}: the PrometheusRule's spec is not {RULES.relative_to(ROOT)}")


# The instructions of the Dockerfile reference (docs.docker.com/reference/dockerfile).
DOCKERFILE_INSTRUCTIONS = {
    "ADD", "ARG", "CMD", "COPY", "ENTRYPOINT", "ENV", "EXPOSE", "FROM", "HEALTHCHECK", "LABEL",
    "MAINTAINER", "ONBUILD", "RUN", "SHELL", "STOPSIGNAL", "USER", "VOLUME", "WORKDIR",
}


def dockerignore_patterns():
    patterns = []
    for line in (ROOT / ".dockerignore").read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            if line.startswith("!"):
                fail(".dockerignore: exceptions (!) are not checked here; add them to this check")
            patterns.append(line.rstrip("/"))
    return patterns


def ignored(path, patterns):
    """Whether Docker leaves `path` out: a pattern matches the path or one of its folders
    (`**/` at the start matches at any depth)."""
    parts = path.split("/")
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    for pattern in patterns:
        for prefix in prefixes:
            if fnmatch.fnmatchcase(prefix, pattern):
                return True
            if pattern.startswith("**/") and (
                fnmatch.fnmatchcase(prefix, pattern[3:])
                or fnmatch.fnmatchcase(prefix, "*/" + pattern[3:])
            ):
                return True
    return False


def check_docker(binary):
    dockerfile = (ROOT / "Dockerfile").read_text()
    lines = []
    for line in dockerfile.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            lines.append(line.strip())
    # What `docker build` would refuse before building: an instruction it does not know, or a
    # COPY from the context of a path that is not there (or that .dockerignore leaves out).
    patterns = dockerignore_patterns()
    for line in lines:
        instruction = line.split()[0]
        if instruction not in DOCKERFILE_INSTRUCTIONS:
            fail(f"Dockerfile: `{instruction}` is not a Dockerfile instruction")
        if line.endswith("\\"):
            fail("Dockerfile: a continued line; this check reads one instruction a line")
        words = line.split()
        if instruction == "COPY" and not any(w.startswith("--from=") for w in words):
            sources = [w for w in words[1:-1] if not w.startswith("--")]
            for source in sources:
                path = ROOT / source
                if not path.exists():
                    fail(f"Dockerfile: COPY {source}: no such path in the build context")
                elif source != "." and ignored(source, patterns):
                    fail(f"Dockerfile: COPY {source}: .dockerignore leaves it out")
    froms = [line.split() for line in lines if line.startswith("FROM ")]
    if len(froms) != 2:
        fail(f"Dockerfile: expected two stages (builder, runtime), found {len(froms)}")
        return
    builder, runtime = froms
    if len(builder) != 4 or builder[2] != "AS":
        fail("Dockerfile: the first stage is not `FROM IMAGE AS NAME`")
        return
    stage = builder[3]
    if runtime[1] != "gcr.io/distroless/cc-debian12:nonroot":
        fail(f"Dockerfile: the runtime base is {runtime[1]}, not distroless cc-debian12:nonroot")
    # The builder's Debian must be the base's, or the binary may need a newer glibc.
    if "bookworm" not in builder[1]:
        fail(f"Dockerfile: the builder {builder[1]} is not Debian bookworm (the base is debian12)")
    workspace = tomllib.loads((ROOT / "Cargo.toml").read_text())
    minimum = workspace["workspace"]["package"]["rust-version"]
    match = re.match(r"rust:(\d+)\.(\d+)", builder[1])
    version = tuple(int(n) for n in minimum.split("."))
    if not match or tuple(int(n) for n in match.groups()) < version[:2]:
        fail(f"Dockerfile: the builder {builder[1]} is older than rust-version {minimum}")

    # The build: the cargo command of scripts/package.sh for the command, its profile's
    # default spelled out.
    package_sh = (ROOT / "scripts/package.sh").read_text()
    default = re.search(r"profile=\$\{TOOLSCHEMA_PACKAGE_PROFILE:-(\w+)\}", package_sh)
    step = re.search(r"^cargo build .*$", package_sh, re.M)
    if not default or not step:
        fail("scripts/package.sh: its profile default or its `cargo build` line is not found")
        return
    profile = default.group(1)
    expected = step.group(0).replace('"$profile"', profile).split()
    expected = [w for w in expected if w != "--quiet"]
    # The image holds the command only: package.sh's other packages (the Node module) are
    # not built there.
    kept = []
    for word in expected:
        if kept and kept[-1] == "-p" and word != "toolschema-cli":
            kept.pop()
            continue
        kept.append(word)
    expected = kept
    runs = [line[4:].split() for line in lines if line.startswith("RUN ")]
    if expected not in runs:
        fail(f"Dockerfile: no `RUN {' '.join(expected)}` (scripts/package.sh's build)")
    workdir = next((line.split()[1] for line in lines if line.startswith("WORKDIR ")), None)
    cli = tomllib.loads((ROOT / "crates/toolschema-cli/Cargo.toml").read_text())
    bin_name = cli["bin"][0]["name"]
    copies = [line.split() for line in lines if line.startswith(f"COPY --from={stage} ")]
    built = f"{workdir}/target/{profile}/{bin_name}"
    if len(copies) != 1 or copies[0][2] != built:
        fail(f"Dockerfile: the runtime stage does not copy {built} (where cargo puts it)")
        return
    installed = copies[0][3]
    entrypoint = next((line for line in lines if line.startswith("ENTRYPOINT ")), "")
    if entrypoint != f'ENTRYPOINT ["{installed}"]':
        fail(f"Dockerfile: the ENTRYPOINT is not [\"{installed}\"]")
    user = next((line.split()[1] for line in lines if line.startswith("USER ")), "")
    if not re.fullmatch(r"[1-9]\d*:[1-9]\d*", user):
        fail(f"Dockerfile: USER {user!r} is not a non-root uid:gid (runAsNonRoot needs numbers)")
    deployment = yaml.safe_load(
        (ROOT / "deploy/kubernetes/base/deployment.yaml").read_text())
    security = deployment["spec"]["template"]["spec"]["securityContext"]
    if user != f"{security.get('runAsUser')}:{security.get('runAsGroup')}":
        fail(f"Dockerfile: USER {user} is not the Deployment's runAsUser:runAsGroup")
    image = deployment["spec"]["template"]["spec"]["containers"][0]["image"]
    version = workspace["workspace"]["package"]["version"]
    if not image.endswith(f":{version}"):
        fail(f"deploy/kubernetes/base/deployment.yaml: the image {image} is not version {version}")

    # The binary needs nothing the distroless base lacks.
    readelf = subprocess.run(["readelf", "-d", binary], capture_output=True, text=True)
    if readelf.returncode != 0:
        fail(f"readelf -d {binary}: {readelf.stderr.strip()}")
    needed = set(re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", readelf.stdout))
    if not needed:
        fail(f"readelf -d {binary}: no NEEDED libraries found (a static binary? check the base)")
    for library in sorted(needed - DISTROLESS_CC_LIBRARIES):
        fail(f"{binary} needs {library}, which gcr.io/distroless/cc-debian12 does not have")

    # .dockerignore: build output and installs out, every tracked file in.
    for path in ["target/debug/toolschema", "interop/node_modules/x/package.json",
                 ".venv/bin/python", "crates/toolschema-py/target/x"]:
        if not ignored(path, patterns):
            fail(f".dockerignore does not leave out {path}")
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.split("\n")
    for path in tracked:
        if path and ignored(path, patterns):
            fail(f".dockerignore leaves out {path}, which git tracks")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port, process, seconds=60):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return False
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            time.sleep(0.2)
    return False


def kubelet_expand(value, env):
    """`$(NAME)` in an argument is the container's variable NAME, as the kubelet expands it."""
    return re.sub(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", lambda m: env.get(m.group(1), m.group(0)), value)


class Client:
    """A Streamable HTTP MCP client of its own (plain JSON or an event stream per answer)."""

    def __init__(self, url, host, token):
        self.url, self.host, self.token = url, host, token
        self.session = None
        self.version = None
        self.next_id = 1

    def post(self, method, params=None, notification=False):
        message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        if not notification:
            message["id"] = self.next_id
            self.next_id += 1
        headers = {"Host": self.host, "Content-Type": "application/json",
                   "Accept": "application/json, text/event-stream"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        if self.session:
            headers["Mcp-Session-Id"] = self.session
        if self.version:
            headers["MCP-Protocol-Version"] = self.version
        request = urllib.request.Request(self.url, json.dumps(message).encode(), headers)
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                status, body = response.status, response.read().decode()
                kind = response.headers.get("Content-Type", "")
                self.session = response.headers.get("Mcp-Session-Id") or self.session
        except urllib.error.HTTPError as error:
            return error.code, None
        if notification or not body.strip():
            return status, None
        if "text/event-stream" in kind:
            for line in body.splitlines():
                if line.startswith("data:"):
                    data = json.loads(line[5:])
                    if data.get("id") == message["id"]:
                        return status, data
            return status, None
        return status, json.loads(body)

    def close(self):
        """Ends the session (DELETE), as a client that is done does."""
        headers = {"Host": self.host, "Mcp-Session-Id": self.session}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        request = urllib.request.Request(self.url, headers=headers, method="DELETE")
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status
        except urllib.error.HTTPError as error:
            return error.code

    def initialize(self):
        status, answer = self.post("initialize", {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "check-deploy", "version": "1"}})
        if status != 200 or not answer or "result" not in answer:
            return status
        self.version = answer["result"]["protocolVersion"]
        self.post("notifications/initialized", notification=True)
        return status

    def tools(self):
        status, answer = self.post("tools/list", {})
        return sorted(t["name"] for t in (answer or {}).get("result", {}).get("tools", []))

    def call(self, name, arguments):
        status, answer = self.post("tools/call", {"name": name, "arguments": arguments})
        return (answer or {}).get("result")


def get(url, host, token=None):
    headers = {"Host": host}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers),
                                    timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, ""


def run_deployment(overlay, rendered, binary):
    binary = str(Path(binary).resolve())
    docs = [d for d in yaml.safe_load_all(Path(rendered).read_text()) if d]
    deployment = next(d for d in docs if d["kind"] == "Deployment")
    config_map = next(d for d in docs if d["kind"] == "ConfigMap")
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    known = help_flags(subprocess.run([binary, "proxy", "--help"], capture_output=True,
                                      text=True, check=True).stdout)
    scratch = Path(tempfile.mkdtemp(prefix="check-deploy-"))
    # The Secret and the ConfigMap, as their volumes would show them.
    tokens = {"alice": "alice-0123456789abcdef0123456789", "prometheus": "scrape-0123456789abcdef01234"}
    (scratch / "tokens").write_text("".join(f"{n}:{t}\n" for n, t in tokens.items()))
    for key, value in config_map["data"].items():
        (scratch / key).write_text(value)
    files = {"--auth-token-file": scratch / "tokens"}
    port, metrics_port = free_port(), free_port()
    upstream = None
    env = {e["name"]: e["value"] for e in container.get("env", []) if "value" in e}
    # Secrets the overlay reads through the environment.
    env.update({e["name"]: f"{e['name'].lower()}-from-a-secret" for e in container.get("env", [])
                if "valueFrom" in e})
    if overlay == "upstream":
        upstream_port = free_port()
        record = scratch / "upstream.jsonl"
        upstream = subprocess.Popen(["node", str(ROOT / "interop/http-upstream.mjs"),
                                     "--record", str(record)],
                                    env={**os.environ, "PORT": str(upstream_port)})
        env["UPSTREAM_URL"] = f"http://127.0.0.1:{upstream_port}/mcp"
    args = []
    server = False
    for arg in container["args"][1:]:
        arg = kubelet_expand(arg, env)
        if server:
            # The server command: this machine's Python, with mcp-server-time in .venv.
            args.append(str(ROOT / ".venv/bin/python") if arg == "python3" else arg)
            continue
        if arg == "--":
            server = True
            args.append(arg)
            continue
        name, _, value = arg.partition("=")
        if name not in known:
            print(f"check-deploy: {overlay}: {name} is not in this binary yet (observability "
                  "contract); left out of this run")
            continue
        if name == "--listen":
            value = f"127.0.0.1:{port}"
        elif name == "--metrics":
            value = f"127.0.0.1:{metrics_port}"
        elif name == "--config":
            value = str(scratch / Path(value).name)
        elif name in files:
            value = str(files[name])
        args.append(f"{name}={value}")
    host = next(a.split("=", 1)[1] for a in args if a.startswith("--allowed-host="))
    try:
        if upstream and not wait_for_port(upstream_port, upstream):
            fail(f"{overlay}: interop/http-upstream.mjs did not start")
            return
        run_proxy(overlay, binary, args, scratch, env, host, tokens, known,
                  (port, metrics_port), record if upstream else None)
    finally:
        if upstream:
            upstream.terminate()
            upstream.wait()


def run_proxy(overlay, binary, args, scratch, env, host, tokens, known, ports, record):
    port, metrics_port = ports
    proxy = subprocess.Popen([binary, "proxy", *args], cwd=scratch,
                             env={**os.environ, **env}, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        if not wait_for_port(port, proxy):
            fail(f"{overlay}: the proxy did not start with the Deployment's arguments: "
                 f"{proxy.stderr.read() if proxy.poll() is not None else 'no port'}")
            return
        exercise(overlay, f"http://127.0.0.1:{port}", host, tokens, known, metrics_port)
        if record:
            seen = [json.loads(line) for line in record.read_text().splitlines()]
            calls = [s["message"] for s in seen
                     if (s.get("message") or {}).get("method") == "tools/call"]
            if [c["params"]["arguments"] for c in calls] != [{"message": "hello"}]:
                fail(f"upstream: the upstream got these calls, not only the valid one: {calls}")
            wanted = f"Bearer {env['UPSTREAM_TOKEN']}"
            if not seen or any(s["headers"].get("authorization") != wanted for s in seen):
                fail("upstream: the upstream did not get its token from --header on every request")
    finally:
        proxy.send_signal(signal.SIGTERM)
        try:
            status = proxy.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proxy.kill()
            status = "none (killed after 30 s)"
        if status != 0:
            fail(f"{overlay}: the proxy's exit status on SIGTERM is {status}, not 0")
        # Standard output holds the audit log's lines (and, with --log-format=json, maybe
        # log lines): one JSON object each.
        audited = []
        for line in proxy.stdout.read().splitlines():
            try:
                audited.append(json.loads(line))
            except ValueError:
                fail(f"{overlay}: a line of standard output is not JSON: {line[:200]!r}")
        tool = "get_current_time" if overlay == "listen-command" else "echo"
        if sum(1 for entry in audited if entry.get("tool") == tool) != 2:
            fail(f"{overlay}: --audit=/dev/stdout did not write the two calls of {tool}: "
                 f"{audited[:4]}")


def exercise(overlay, base, host, tokens, known, metrics_port):
    url = f"{base}/mcp"
    # The probes first, before any client: a pod no one has called yet must become ready, or
    # the Service never sends it a client.
    if "--metrics" in known:
        if get(f"{base}/healthz", "localhost")[0] != 200:
            fail(f"{overlay}: GET /healthz without a token, as the liveness probe sends it, "
                 "is not 200")
        deadline = time.monotonic() + 60
        while (ready := get(f"{base}/readyz", "localhost"))[0] != 200:
            if time.monotonic() > deadline:
                fail(f"{overlay}: GET /readyz, as the readiness probe sends it, is not 200 "
                     f"within 60 s of the start, before any client: {ready}")
                break
            time.sleep(1)
    else:
        print(f"check-deploy: {overlay}: /healthz, /readyz and /metrics not checked: this "
              "binary has no --metrics yet")
    if Client(url, host, None).initialize() != 401:
        fail(f"{overlay}: a request without a token is not refused with 401")
    if Client(url, "attacker.example", tokens["alice"]).initialize() in (200, None):
        fail(f"{overlay}: a host name the Deployment does not allow is answered")
    alice = Client(url, host, tokens["alice"])
    if alice.initialize() != 200:
        fail(f"{overlay}: alice cannot open a session through the Service's host name {host}")
        return
    tool, valid, invalid = (("get_current_time", {"timezone": "UTC"}, {"timezone": 5})
                            if overlay == "listen-command"
                            else ("echo", {"message": "hello"}, {"message": 5}))
    listed = alice.tools()
    if tool not in listed:
        fail(f"{overlay}: tools/list through the proxy has no {tool}: {listed}")
    result = alice.call(tool, valid)
    if not result or result.get("isError"):
        fail(f"{overlay}: a valid call of {tool} is not served: {result}")
    result = alice.call(tool, invalid)
    if not result or not result.get("isError"):
        fail(f"{overlay}: an invalid call of {tool} is not refused: {result}")
    # Closed first: interop/http-upstream.mjs gives every session the same id.
    if alice.close() not in (200, 202, 204):
        fail(f"{overlay}: alice's session does not close")
    scraper = Client(url, host, tokens["prometheus"])
    status = scraper.initialize()
    listed = scraper.tools() if status == 200 else None
    if listed != []:
        fail(f"{overlay}: the scraper's token opens a session ({status}) that lists tools "
             f"{listed}, not none (toolschema.toml denies it all)")
    if "--metrics" not in known:
        return
    status, text = get(f"http://127.0.0.1:{metrics_port}/metrics", "localhost",
                       tokens["prometheus"])
    if status != 200:
        fail(f"{overlay}: GET /metrics with the scrape token: {status}")
    # Every metric the alert rules read is one the proxy exports (a family is named in its
    # `# TYPE` line; a histogram's series add _bucket, _sum and _count).
    families = set(re.findall(r"^# TYPE (\S+) ", text, re.M))
    for name in sorted(set(re.findall(r"\b((?:toolschema|mcp)_\w+)\s*[{[]", RULES.read_text()))):
        family = re.sub(r"_(bucket|sum|count)$", "", name)
        if family not in families and f"{family}_total" not in families \
                and family.removesuffix("_total") not in families:
            fail(f"{overlay}: the alert rules read {name}, which /metrics does not export "
                 f"(it exports {sorted(families)})")
    # And the series the rules select exist after one valid and one invalid call.
    for series in [r'toolschema_proxy_calls_total\{[^}]*verdict="refused_invalid"',
                   r'mcp_server_operation_duration_seconds_bucket\{[^}]*mcp_method_name="tools/call"']:
        if not re.search(f"^{series}", text, re.M):
            fail(f"{overlay}: /metrics has no series {series} after an invalid call")


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "manifests":
        check_manifests(*sys.argv[2:])
    elif len(sys.argv) == 5 and sys.argv[1] == "run":
        run_deployment(*sys.argv[2:])
    elif len(sys.argv) == 3 and sys.argv[1] == "docker":
        check_docker(sys.argv[2])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    for message in failures:
        print(f"check-deploy: {message}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
