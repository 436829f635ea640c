#!/usr/bin/env python3
"""Offline checks of the deployment files (run by infra/check-deploy; README "Deploy").

- Kubernetes: every manifest of infra/k8s/kustomization.yaml, the Secret template and (given
  --rendered) the output of `kubectl kustomize`, validated against the API schemas bundled in
  the `kubernetes-validate` package (strict: unknown fields fail), for the oldest and the newest
  Kubernetes version we support; then what the manifests promise each other and the binary
  (probe paths, named ports, metrics annotations, non-root, read-only root, the photo volume,
  the migration command, names that refer to each other, variables the binary reads).
- Compose: infra/compose.yaml parsed as YAML and checked for the services, health checks and
  start order the README promises.
- Dockerfile: multi-stage, the toolchain of Cargo.toml, `--locked`, a numeric non-root USER,
  only the binary in the runtime stage; .dockerignore keeps target/, .local/ and secrets out.

Prints one line per check; exits 1 when any failed.
"""

from __future__ import annotations

import argparse
import fnmatch
import re
import shlex
import sys
from pathlib import Path

import yaml
from kubernetes_validate import utils as kv

ROOT = Path(__file__).resolve().parent.parent
INFRA = ROOT / "infra"
K8S = INFRA / "k8s"
COMPOSE = INFRA / "compose.yaml"
COMPOSE_ENV_EXAMPLE = INFRA / "compose.env.example"
DOCKERFILE = INFRA / "docker" / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"

# The oldest Kubernetes minor version the manifests are meant for, and the newest one the
# installed kubernetes-validate knows.
OLDEST_KUBERNETES = "1.29"
READY_PATH = "/api/v1/health/ready"
LIVE_PATH = "/api/v1/health/live"
# Variables of the metrics contract of issue 16 (built in another branch): accepted before
# src/ reads them.
CONTRACT_VARIABLES = {"METRICS_BIND_ADDRESS"}
# Variables compose itself reads (interpolation), never the binary.
COMPOSE_ONLY_VARIABLES = {"POSTGRES_PASSWORD", "KULTIVA_HTTP_PUBLISH", "KULTIVA_IMAGE"}


class Checks:
    def __init__(self) -> None:
        self.passed = 0
        self.failed = 0

    def check(self, ok: bool, what: str, why: str = "") -> bool:
        if ok:
            self.passed += 1
            print(f"[deploy-check] ok    {what}")
        else:
            self.failed += 1
            print(f"[deploy-check] FAIL  {what}" + (f": {why}" if why else ""))
        return ok


def load_all(path: Path) -> list[dict]:
    with path.open() as f:
        return [doc for doc in yaml.safe_load_all(f) if doc]


def rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


def known_variables() -> set[str]:
    """Every quoted UPPER_CASE name in src/: the environment variables the binary reads."""
    names: set[str] = set()
    for source in (ROOT / "src").rglob("*.rs"):
        names.update(re.findall(r'"([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|[A-Z]{4,})"', source.read_text()))
    return names


def jwt_placeholder() -> str:
    text = (ROOT / "src" / "config.rs").read_text()
    found = re.search(r'pub const JWT_SECRET_PLACEHOLDER: &str = "([^"]+)";', text)
    return found.group(1) if found else ""


def rust_version() -> str:
    text = (ROOT / "Cargo.toml").read_text()
    found = re.search(r'^rust-version\s*=\s*"([^"]+)"', text, re.M)
    return found.group(1) if found else ""


# ------------------------------------------------------------------------------ Kubernetes


def validate_schema(c: Checks, doc: dict, source: str, versions: list[str]) -> None:
    name = f"{source}: {doc.get('kind')}/{doc.get('metadata', {}).get('name')}"
    for version in versions:
        try:
            checked = kv.validate(doc, version, strict=True)
            c.check(True, f"{name} valid against Kubernetes {checked} (strict)")
        except kv.ValidationError as e:
            path = ".".join(str(p) for p in e.path)
            c.check(False, f"{name} against Kubernetes {version}", f"{path}: {e.message}")
        except kv.SchemaNotFoundError as e:
            c.check(False, f"{name} against Kubernetes {version}", e.message)


def by_kind(docs: list[dict], kind: str) -> list[dict]:
    return [d for d in docs if d.get("kind") == kind]


def one(c: Checks, docs: list[dict], kind: str) -> dict:
    found = by_kind(docs, kind)
    c.check(len(found) == 1, f"k8s: exactly one {kind}", f"found {len(found)}")
    return found[0] if found else {}


def port_of(address: str) -> int | None:
    found = re.fullmatch(r".*:(\d+)", address or "")
    return int(found.group(1)) if found else None


def check_pod_security(c: Checks, what: str, pod: dict, uid: int | None) -> None:
    sc = pod.get("securityContext", {})
    c.check(sc.get("runAsNonRoot") is True, f"{what}: runAsNonRoot")
    run_as = sc.get("runAsUser")
    c.check(
        isinstance(run_as, int) and run_as > 0 and run_as == uid,
        f"{what}: runAsUser is the image's numeric USER ({uid})",
        f"runAsUser {run_as}",
    )
    c.check(sc.get("seccompProfile", {}).get("type") == "RuntimeDefault", f"{what}: seccomp RuntimeDefault")
    for container in pod.get("containers", []):
        csc = container.get("securityContext", {})
        cname = f"{what} container {container.get('name')}"
        c.check(csc.get("allowPrivilegeEscalation") is False, f"{cname}: no privilege escalation")
        c.check(csc.get("readOnlyRootFilesystem") is True, f"{cname}: read-only root filesystem")
        c.check(csc.get("capabilities", {}).get("drop") == ["ALL"], f"{cname}: drops all capabilities")
        res = container.get("resources", {})
        c.check(
            all(k in res.get("requests", {}) for k in ("cpu", "memory"))
            and "memory" in res.get("limits", {}),
            f"{cname}: cpu/memory requests and a memory limit",
        )
        c.check(container.get("image") == "kultiva", f"{cname}: image `kultiva` (set by kustomization images)")


def env_sources(pod: dict) -> tuple[set[str], set[str]]:
    maps, secrets = set(), set()
    for container in pod.get("containers", []):
        for src in container.get("envFrom", []):
            if "configMapRef" in src:
                maps.add(src["configMapRef"]["name"])
            if "secretRef" in src:
                secrets.add(src["secretRef"]["name"])
    return maps, secrets


def check_kubernetes(c: Checks, rendered: Path | None, uid: int | None) -> None:
    versions = [OLDEST_KUBERNETES, kv.latest_version()]
    kustomization = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    resources = kustomization.get("resources", [])
    docs: list[dict] = []
    for name in resources:
        path = K8S / name
        if not c.check(path.is_file(), f"kustomization resource {name} exists"):
            continue
        for doc in load_all(path):
            validate_schema(c, doc, rel(path), versions)
            docs.append(doc)
    template = K8S / "secret.template.yaml"
    secret_docs = load_all(template) if template.is_file() else []
    c.check(
        template.is_file() and "secret.template.yaml" not in resources,
        "Secret template exists and is not applied by kustomization (placeholders never overwrite real values)",
    )
    for doc in secret_docs:
        validate_schema(c, doc, rel(template), versions)
    if rendered is not None:
        rendered_docs = load_all(rendered)
        c.check(
            len(rendered_docs) == len(docs),
            "kubectl kustomize renders every resource",
            f"{len(rendered_docs)} rendered, {len(docs)} listed",
        )
        for doc in rendered_docs:
            validate_schema(c, doc, "kubectl kustomize infra/k8s", [kv.latest_version()])
            c.check(
                doc.get("kind") == "Namespace" or doc["metadata"].get("namespace") == "kultiva",
                f"rendered {doc['kind']}/{doc['metadata']['name']} is in namespace kultiva",
            )

    images = {i.get("name"): i for i in kustomization.get("images", [])}
    c.check("kultiva" in images and images["kultiva"].get("newName"), "kustomization sets the image `kultiva`")

    deployment = one(c, docs, "Deployment")
    service = one(c, docs, "Service")
    hpa = one(c, docs, "HorizontalPodAutoscaler")
    job = one(c, docs, "Job")
    configmap = one(c, docs, "ConfigMap")
    pvcs = {d["metadata"]["name"]: d for d in by_kind(docs, "PersistentVolumeClaim")}
    pdbs = by_kind(docs, "PodDisruptionBudget")
    secret = secret_docs[0] if secret_docs else {}
    settings = configmap.get("data", {})

    # Deployment: probes, ports, metrics, security, configuration, the photo volume.
    pod = deployment.get("spec", {}).get("template", {}).get("spec", {})
    pod_labels = deployment.get("spec", {}).get("template", {}).get("metadata", {}).get("labels", {})
    annotations = deployment.get("spec", {}).get("template", {}).get("metadata", {}).get("annotations", {})
    containers = pod.get("containers", [])
    app = containers[0] if containers else {}
    ports = {p.get("name"): p.get("containerPort") for p in app.get("ports", [])}
    c.check(app.get("args") == ["serve"], "Deployment runs `kultiva serve`", f"args {app.get('args')}")
    c.check(
        app.get("readinessProbe", {}).get("httpGet", {}).get("path") == READY_PATH
        and app["readinessProbe"]["httpGet"].get("port") in ("http", ports.get("http")),
        f"Deployment readiness probe GET {READY_PATH} on port http",
    )
    c.check(
        app.get("livenessProbe", {}).get("httpGet", {}).get("path") == LIVE_PATH,
        f"Deployment liveness probe GET {LIVE_PATH}",
    )
    c.check(ports.get("http") == port_of(settings.get("BIND_ADDRESS", "")), "port http = BIND_ADDRESS's port")
    c.check(
        ports.get("metrics") is not None and ports.get("metrics") == port_of(settings.get("METRICS_BIND_ADDRESS", "")),
        "named container port `metrics` = METRICS_BIND_ADDRESS's port",
        f"ports {ports}, METRICS_BIND_ADDRESS {settings.get('METRICS_BIND_ADDRESS')!r}",
    )
    c.check(
        annotations.get("prometheus.io/scrape") == "true"
        and annotations.get("prometheus.io/port") == str(ports.get("metrics"))
        and annotations.get("prometheus.io/path") == "/metrics",
        "prometheus.io annotations name the metrics port and /metrics",
        str(annotations),
    )
    c.check("replicas" not in deployment.get("spec", {}), "Deployment leaves replicas to the HPA")
    check_pod_security(c, "Deployment", pod, uid)
    c.check(
        pod.get("securityContext", {}).get("fsGroup") == uid,
        "Deployment: fsGroup makes the photo volume writable for the image's user",
    )
    grace = pod.get("terminationGracePeriodSeconds", 30)
    shutdown = int(settings.get("SHUTDOWN_GRACE_SECONDS", "25"))
    c.check(grace > shutdown + 5, "terminationGracePeriodSeconds > SHUTDOWN_GRACE_SECONDS + preStop pause")
    storage_dir = settings.get("STORAGE_DIR", "")
    mounts = {m.get("mountPath"): m.get("name") for m in app.get("volumeMounts", [])}
    volumes = {v.get("name"): v for v in pod.get("volumes", [])}
    photo_volume = volumes.get(mounts.get(storage_dir, ""), {})
    claim = photo_volume.get("persistentVolumeClaim", {}).get("claimName")
    c.check(
        storage_dir.startswith("/") and claim in pvcs,
        "STORAGE_DIR is a mounted PersistentVolumeClaim (the root filesystem is read-only)",
        f"STORAGE_DIR {storage_dir!r}, mounts {mounts}",
    )
    if claim in pvcs:
        c.check(
            "ReadWriteMany" in pvcs[claim]["spec"].get("accessModes", []),
            "the photo volume is ReadWriteMany (several replicas share it)",
        )
    maps, secrets = env_sources(pod)
    c.check(maps == {configmap.get("metadata", {}).get("name")}, "Deployment reads the ConfigMap")
    c.check(secrets == {secret.get("metadata", {}).get("name")}, "Deployment reads the Secret of the template")

    # Service, HPA, PDB point at the Deployment's pods.
    selector = service.get("spec", {}).get("selector", {})
    c.check(
        bool(selector) and all(pod_labels.get(k) == v for k, v in selector.items()),
        "Service selects the Deployment's pods",
    )
    c.check(
        all(p.get("targetPort") in ports or p.get("targetPort") in ports.values() for p in service.get("spec", {}).get("ports", []))
        and "metrics" not in [p.get("targetPort") for p in service.get("spec", {}).get("ports", [])],
        "Service targets the http port and not the metrics port",
    )
    target = hpa.get("spec", {}).get("scaleTargetRef", {})
    c.check(
        target.get("kind") == "Deployment" and target.get("name") == deployment.get("metadata", {}).get("name"),
        "HPA scales the Deployment",
    )
    c.check(
        any(m.get("resource", {}).get("name") == "cpu" for m in hpa.get("spec", {}).get("metrics", []))
        and "cpu" in app.get("resources", {}).get("requests", {}),
        "HPA scales on CPU and the container requests CPU",
    )
    c.check(
        all(
            all(pod_labels.get(k) == v for k, v in p["spec"]["selector"]["matchLabels"].items())
            for p in pdbs
        ),
        "PodDisruptionBudget selects the Deployment's pods",
    )

    # Migration Job.
    job_pod = job.get("spec", {}).get("template", {}).get("spec", {})
    job_container = (job_pod.get("containers") or [{}])[0]
    c.check(
        job_container.get("args", [])[:2] == ["migrate", "--all-tenants"],
        "Job runs `kultiva migrate --all-tenants`",
        f"args {job_container.get('args')}",
    )
    c.check(job_pod.get("restartPolicy") in ("Never", "OnFailure"), "Job restartPolicy Never/OnFailure")
    check_pod_security(c, "Job", job_pod, uid)
    c.check(env_sources(job_pod) == (maps, secrets), "Job reads the same ConfigMap and Secret")

    # Variables: the binary reads every one; the template holds placeholders only.
    known = known_variables() | CONTRACT_VARIABLES
    unknown = sorted(set(settings) - known)
    c.check(not unknown, "ConfigMap sets only variables the binary reads", f"unknown {unknown}")
    secret_values = secret.get("stringData", {})
    unknown = sorted(set(secret_values) - known)
    c.check(not unknown, "Secret template names only variables the binary reads", f"unknown {unknown}")
    c.check(
        {"DATABASE_URL", "REDIS_URL", "JWT_SECRET_KEY"} <= set(secret_values),
        "Secret template has DATABASE_URL, REDIS_URL, JWT_SECRET_KEY",
    )
    placeholder = jwt_placeholder()
    c.check(
        bool(placeholder) and secret_values.get("JWT_SECRET_KEY") == placeholder,
        "Secret template's JWT_SECRET_KEY is the placeholder full mode refuses to start with",
    )
    real = [
        k
        for k, v in secret_values.items()
        if k != "JWT_SECRET_KEY" and not ("CHANGE-ME" in v or ".invalid" in v)
    ]
    c.check(not real, "Secret template holds placeholders only (CHANGE-ME, *.invalid hosts)", f"{real}")
    c.check(not (set(settings) & set(secret_values)), "no variable is in both the ConfigMap and the Secret")


# ------------------------------------------------------------------------------ compose


def image_major(image: str) -> int | None:
    found = re.search(r":(\d+)", image or "")
    return int(found.group(1)) if found else None


def check_compose(c: Checks, uid: int | None) -> None:
    text = COMPOSE.read_text()
    compose = yaml.safe_load(text)
    services = compose.get("services", {})
    for name in ("postgres", "redis", "migrate", "kultiva"):
        c.check(name in services, f"compose: service {name}")
    pg, redis = services.get("postgres", {}), services.get("redis", {})
    migrate, app = services.get("migrate", {}), services.get("kultiva", {})
    c.check(image_major(pg.get("image", "")) in (15, 16), "compose: PostgreSQL 15 or 16", pg.get("image", ""))
    c.check(image_major(redis.get("image", "")) == 7, "compose: Redis 7", redis.get("image", ""))
    for name, svc, probe in (("postgres", pg, "pg_isready"), ("redis", redis, "ping"), ("kultiva", app, READY_PATH)):
        c.check(
            probe in str(svc.get("healthcheck", {}).get("test")),
            f"compose: {name} has a healthcheck ({probe})",
        )

    def waits(svc: dict, dep: str, condition: str) -> bool:
        return svc.get("depends_on", {}).get(dep, {}).get("condition") == condition

    c.check(migrate.get("command") == ["migrate", "--all-tenants"], "compose: migrate runs `kultiva migrate --all-tenants`")
    c.check(migrate.get("restart") == "no", "compose: migrate is a one-shot (restart: no)")
    for svc_name, svc in (("migrate", migrate), ("kultiva", app)):
        for dep in ("postgres", "redis"):
            c.check(waits(svc, dep, "service_healthy"), f"compose: {svc_name} waits for {dep} to be healthy")
    c.check(
        waits(app, "migrate", "service_completed_successfully"),
        "compose: kultiva starts after migrate completed successfully",
    )
    c.check(app.get("command") == ["serve"], "compose: kultiva runs `kultiva serve`")
    for svc_name, svc in (("migrate", migrate), ("kultiva", app)):
        build = svc.get("build", {})
        context = (COMPOSE.parent / build.get("context", ".")).resolve()
        c.check(
            (context / build.get("dockerfile", "Dockerfile")).resolve() == DOCKERFILE,
            f"compose: {svc_name} builds infra/docker/Dockerfile from the repository root",
        )
        c.check(svc.get("image") == app.get("image"), f"compose: {svc_name} runs the same image as kultiva")
        c.check(svc.get("read_only") is True, f"compose: {svc_name} has a read-only root filesystem")

    env = app.get("environment", {})
    c.check(env == migrate.get("environment"), "compose: migrate and kultiva get the same environment")
    for name in ("DATABASE_URL", "REDIS_URL", "JWT_SECRET_KEY", "BIND_ADDRESS", "STORAGE_DIR"):
        c.check(name in env, f"compose: kultiva's environment sets {name}")
    c.check(
        "@postgres:" in env.get("DATABASE_URL", "") and "//redis:" in env.get("REDIS_URL", ""),
        "compose: DATABASE_URL and REDIS_URL name the compose services",
    )
    mounts = [str(v).split(":")[1] for v in app.get("volumes", []) if ":" in str(v)]
    c.check(env.get("STORAGE_DIR") in mounts, "compose: STORAGE_DIR is a volume")
    known = known_variables() | CONTRACT_VARIABLES
    unknown = sorted(set(env) - known)
    c.check(not unknown, "compose: the environment names only variables the binary reads", f"unknown {unknown}")
    published = [str(p) for p in app.get("ports", [])]
    c.check(
        all(p.endswith(":8080") for p in published) and not pg.get("ports") and not redis.get("ports"),
        "compose: only the service's port 8080 is published (not PostgreSQL, Redis or metrics)",
        str(published),
    )

    # Every variable compose requires (${NAME:?…}) is in the example file, empty (to be filled).
    required = set(re.findall(r"\$\{([A-Z_][A-Z0-9_]*):\?", text))
    example = COMPOSE_ENV_EXAMPLE.read_text()
    for name in sorted(required):
        c.check(
            re.search(rf"^{name}=$", example, re.M) is not None,
            f"compose: required {name} is listed (empty) in infra/compose.env.example",
        )
    referenced = set(re.findall(r"\$\{([A-Z_][A-Z0-9_]*)", text))
    unknown = sorted(referenced - known - COMPOSE_ONLY_VARIABLES)
    c.check(not unknown, "compose: every ${…} is a compose setting or a variable the binary reads", f"{unknown}")
    ignore = (ROOT / ".gitignore").read_text().split()
    c.check("/infra/.env" in ignore, ".gitignore keeps infra/.env (the compose secrets) out of git")


# ------------------------------------------------------------------------------ Dockerfile


def dockerfile_stages(text: str) -> tuple[dict[str, str], list[list[str]]]:
    """ARG defaults before the first FROM, and the instructions of each stage."""
    joined = re.sub(r"\\\n", " ", text)
    args: dict[str, str] = {}
    stages: list[list[str]] = []
    for line in joined.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        word = line.split()[0].upper()
        if word == "FROM":
            stages.append([line])
        elif stages:
            stages[-1].append(line)
        elif word == "ARG" and "=" in line:
            key, value = line.split(None, 1)[1].split("=", 1)
            args[key] = value
    return args, stages


def check_dockerfile(c: Checks) -> int | None:
    text = DOCKERFILE.read_text()
    args, stages = dockerfile_stages(text)
    c.check(len(stages) >= 2, "Dockerfile: multi-stage", f"{len(stages)} stage(s)")
    if not stages:
        return None
    build, runtime = stages[0], stages[-1]
    base = re.sub(r"\$\{(\w+)\}", lambda m: args.get(m.group(1), m.group(0)), build[0].split()[1])
    toolchain = rust_version()
    c.check(
        bool(re.search(r"(^|/)rust:" + re.escape(toolchain) + r"([-.]|$)", base)) and " AS build" in build[0],
        f"Dockerfile: build stage `build` on the official Rust image {toolchain} (Cargo.toml rust-version)",
        base,
    )
    cargo_builds = [line for line in build if line.startswith("RUN") and "cargo build" in line]
    c.check(
        bool(cargo_builds) and all("--locked" in line and "--release" in line for line in cargo_builds),
        "Dockerfile: every cargo build is --release --locked",
    )
    c.check(
        any("--bin kultiva" in line for line in cargo_builds), "Dockerfile: builds --bin kultiva"
    )
    copies = [line for line in build if line.upper().startswith("COPY") and "--from=" not in line]
    first_src = next((i for i, line in enumerate(copies) if re.search(r"\bsrc\b", line.split()[1])), None)
    c.check(
        first_src is not None and first_src > 0 and copies[0].split()[1:3] == ["Cargo.toml", "Cargo.lock"],
        "Dockerfile: dependencies are built from the manifests before the sources are copied (cached layer)",
    )
    runtime_base = runtime[0].split()[1]
    c.check(
        re.search(r"debian:\w+-slim$", runtime_base) is not None or "distroless/cc" in runtime_base,
        "Dockerfile: small runtime base (Debian slim or distroless/cc)",
        runtime_base,
    )
    # The binary links against the build stage's glibc: the runtime must be the same release.
    release = re.search(r"-(bookworm|trixie|bullseye)$", base)
    c.check(
        release is not None
        and (
            runtime_base.endswith(f":{release.group(1)}-slim")
            or {"bookworm": "debian12", "trixie": "debian13"}.get(release.group(1), "?") in runtime_base
        ),
        "Dockerfile: build and runtime stages are the same Debian release (glibc)",
        f"{base} / {runtime_base}",
    )
    users = [line.split()[1] for line in runtime if line.upper().startswith("USER ")]
    uid = None
    if users and re.fullmatch(r"\d+(:\d+)?", users[-1]):
        uid = int(users[-1].split(":")[0])
    c.check(uid is not None and uid > 0, "Dockerfile: runtime USER is numeric and not root", f"USER {users}")
    from_build = [line for line in runtime if line.upper().startswith("COPY") and "--from=" in line]
    c.check(
        len(from_build) == 1 and from_build[0].split()[-1] == "/usr/local/bin/kultiva",
        "Dockerfile: the runtime stage takes only the binary from the build stage",
    )
    other_copies = [line for line in runtime if line.upper().startswith(("COPY", "ADD")) and "--from=" not in line]
    c.check(not other_copies, "Dockerfile: nothing from the build context in the runtime stage", f"{other_copies}")

    def instruction(name: str) -> list:
        found = [line for line in runtime if line.upper().startswith(name + " ")]
        if not found:
            return []
        try:
            return yaml.safe_load(found[-1].split(None, 1)[1])
        except yaml.YAMLError:
            return []

    c.check(instruction("ENTRYPOINT") == ["kultiva"], 'Dockerfile: ENTRYPOINT ["kultiva"]')
    c.check(instruction("CMD") == ["serve"], 'Dockerfile: CMD ["serve"]')
    exposed = " ".join(line for line in runtime if line.upper().startswith("EXPOSE "))
    c.check("8080" in exposed.split(), "Dockerfile: EXPOSE 8080")
    env = " ".join(line for line in runtime if line.upper().startswith("ENV "))
    c.check("BIND_ADDRESS=0.0.0.0:8080" in env, "Dockerfile: listens on 0.0.0.0:8080 (the default is loopback)")

    # .dockerignore: the last matching pattern decides, as in Docker.
    patterns = [
        line.strip()
        for line in DOCKERIGNORE.read_text().splitlines()
        if line.strip() and not line.strip().startswith("#")
    ]

    def excluded(path: str) -> bool:
        result = False
        for pattern in patterns:
            negate = pattern.startswith("!")
            p = pattern[1:] if negate else pattern
            p = p.strip("/")
            parts = path.split("/")
            prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
            if any(fnmatch.fnmatchcase(prefix, p) for prefix in prefixes):
                result = not negate
        return result

    for path in ("target/release/kultiva", ".local/pg/data", "loadtest/target/x", "infra/.env", ".git/config", "tests/api/main.rs"):
        c.check(excluded(path), f".dockerignore keeps {path.split('/')[0] if path != 'infra/.env' else path} out of the build context")
    needed = set()
    for line in copies:
        parts = shlex.split(line)[1:]
        needed.update(p for p in parts[:-1] if not p.startswith("--"))
    for path in sorted(needed):
        c.check(not excluded(path + ("/x" if (ROOT / path).is_dir() else "")), f".dockerignore lets {path} into the build context")
    return uid


def check_citus_variants(c: Checks) -> None:
    """The Citus variants (README "Citus"): the overlay's manifests against the Kubernetes
    schemas, the overlay builds on infra/k8s, and the compose override's nodes."""
    overlay = INFRA / "k8s-citus"
    kustomization = yaml.safe_load((overlay / "kustomization.yaml").read_text())
    resources = kustomization.get("resources", [])
    c.check("../k8s" in resources, "k8s-citus: the overlay includes infra/k8s")
    docs = []
    for name in resources:
        if name.startswith(".."):
            continue
        path = overlay / name
        if c.check(path.is_file(), f"k8s-citus: resource {name} exists"):
            docs += load_all(path)
    for doc in docs:
        validate_schema(c, doc, f"k8s-citus/{doc.get('kind')}", ["1.29"])
    sets = {d["metadata"]["name"]: d for d in by_kind(docs, "StatefulSet")}
    c.check({"citus-coordinator", "citus-worker"} <= set(sets), "k8s-citus: coordinator and worker StatefulSets")
    for name, sts in sets.items():
        pod = sts["spec"]["template"]["spec"]
        args = " ".join(pod["containers"][0].get("args", []))
        c.check("wal_level=logical" in args, f"k8s-citus: {name} runs with wal_level=logical")
        c.check(pod.get("securityContext", {}).get("runAsNonRoot") is True, f"k8s-citus: {name} runs as non-root")
    compose = yaml.safe_load((INFRA / "compose.citus.yaml").read_text())
    services = compose.get("services", {})
    for name in ("postgres", "worker1", "worker2", "citus-setup"):
        c.check(name in services, f"compose.citus: service {name}")
    for name in ("postgres", "worker1", "worker2"):
        command = " ".join((services.get(name) or {}).get("command", []))
        c.check("wal_level=logical" in command, f"compose.citus: {name} runs with wal_level=logical")
    deps = (services.get("migrate") or {}).get("depends_on", {})
    c.check(
        deps.get("citus-setup", {}).get("condition") == "service_completed_successfully",
        "compose.citus: migrate waits for citus-setup",
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rendered", type=Path, help="output of `kubectl kustomize infra/k8s`")
    opts = parser.parse_args()
    c = Checks()
    uid = check_dockerfile(c)
    check_kubernetes(c, opts.rendered, uid)
    check_compose(c, uid)
    check_citus_variants(c)
    print(f"[deploy-check] deploy checks: {c.passed} passed, {c.failed} failed")
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main())
