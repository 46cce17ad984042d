"""The deployment manifests stay in step with the code.

docker-compose.yml: every ACM service gets every variable its settings class requires (derived from
the classes, not listed here), the infrastructure images are there, and every URL / address names a
compose service. k8s/: both overlays render with kustomize (installed by scripts/tools/kustomize.sh
through the Go module proxy, hence `infra`) into a Deployment and a Service per ACM service with gRPC
probes (readiness on the overall status, liveness on acm.runtime.LIVENESS), requests and limits, a Prometheus
metrics port, and settings that load; in prod the gateway scales on CPU and each Kafka consumer with a KEDA
ScaledObject whose consumer groups and topics are the ones the code subscribes (read from the services).
"""

from __future__ import annotations

import ast
import base64
import importlib
import inspect
import os
import shlex
import shutil
import subprocess
import tomllib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from acm import topics
from acm.runtime import LIVENESS
from acm.settings import ServiceSettings, load
from acm.transport import ServerTls, TransportRefused
from tests.support.pki import Authority

ROOT = Path(__file__).resolve().parents[2]
COMPOSE_FILE = ROOT / "docker-compose.yml"
KUSTOMIZE_SH = ROOT / "scripts/tools/kustomize.sh"
OVERLAYS = ("dev", "prod")
# The partitions k8s/overlays/prod/keda.yaml asks the consumed topics to have: no ScaledObject may scale past it.
PROD_TOPIC_PARTITIONS = 12
# The Kafka consumers that scale on lag (KEDA) in prod; the gateway scales on CPU (an HPA).
LAG_SCALED = ("acm-ingest", "acm-retrieve", "acm-anticipate", "acm-compact")

# Image repositories the distributed stack needs (tag left free).
INFRA_IMAGES = {
    "kafka": "apache/kafka",
    "qdrant": "qdrant/qdrant",
    "neo4j": "neo4j",
    "postgres": "postgres",
    "redis": "redis",
    "otel collector": "otel/opentelemetry-collector-contrib",
}
# URL schemes that select the server-backed adapter of each store (libs/acm/bootstrap.py).
SERVER_SCHEMES = {
    "ACM_DATABASE_URL": {"postgresql", "postgres"},
    "ACM_VECTOR_URL": {"http", "https"},
    "ACM_GRAPH_URL": {"bolt", "neo4j"},
    "ACM_CACHE_URL": {"redis", "rediss"},
    "ACM_BUS_URL": {"kafka"},
}


def _entry_points() -> dict[str, str]:
    """The services' console scripts (acm-gateway, …) and their packages, from pyproject.toml."""
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    return {cmd: target.split(":")[0].split(".")[0] for cmd, target in scripts.items() if cmd.startswith("acm-")}


SERVICES = _entry_points()


def _settings_class(command: str) -> type[ServiceSettings]:
    """The one ServiceSettings subclass defined in <package>.settings (every console script has one)."""
    module_name = f"{SERVICES[command]}.settings"
    module = importlib.import_module(module_name)
    classes = [
        cls
        for _, cls in inspect.getmembers(module, inspect.isclass)
        if issubclass(cls, ServiceSettings) and cls is not ServiceSettings and cls.__module__ == module_name
    ]
    assert len(classes) == 1, f"{module_name}: expected one ServiceSettings subclass, found {classes}"
    return classes[0]


def _foreign_urls(cls: type[ServiceSettings], env: Mapping[str, str]) -> list[str]:
    """Store URLs given to a service whose settings do not read them (each service gets its own stores only)."""
    read = {f"ACM_{field.upper()}" for field in cls.model_fields}
    return sorted(v for v in env if v.startswith("ACM_") and v.endswith("_URL") and v not in read)


def _required_vars(cls: type[ServiceSettings]) -> set[str]:
    prefix = str(cls.model_config.get("env_prefix", ""))
    return {prefix + name.upper() for name, field in cls.model_fields.items() if field.is_required()}


def _load_settings(
    cls: type[ServiceSettings], env: Mapping[str, str], monkeypatch: pytest.MonkeyPatch
) -> ServiceSettings:
    """Build the settings from exactly `env` (the process' own ACM_* variables removed)."""
    for key in [k for k in os.environ if k.startswith("ACM_")]:
        monkeypatch.delenv(key)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return load(cls)  # as the service does; exits naming each missing or invalid variable


def _host_port(value: str) -> tuple[str | None, int | None]:
    """Host and port of a URL (scheme://host:port/…) or an address (host:port)."""
    parts = urlsplit(value if "://" in value else f"//{value}")
    return parts.hostname, parts.port


def _port(addr: str) -> int:
    port = _host_port(addr)[1]
    assert port, f"no port in {addr!r}"
    return port


# --------------------------------------------------------------------------- docker-compose.yml


def _compose() -> dict[str, Any]:
    data = yaml.safe_load(COMPOSE_FILE.read_text())
    assert isinstance(data, dict) and isinstance(data.get("services"), dict)
    return data


def _command(service: Mapping[str, Any]) -> list[str]:
    command = service.get("command") or []
    return shlex.split(command) if isinstance(command, str) else [str(c) for c in command]


def _environment(service: Mapping[str, Any]) -> dict[str, str]:
    env = service.get("environment") or {}
    if isinstance(env, list):
        env = dict(item.split("=", 1) for item in env)
    return {str(k): str(v) for k, v in env.items() if v is not None}


def _depends_on(service: Mapping[str, Any]) -> set[str]:
    deps = service.get("depends_on") or {}
    return set(deps) if isinstance(deps, (dict, list)) else set()


def _compose_service(command: str) -> tuple[str, dict[str, Any]]:
    matches = [(n, s) for n, s in _compose()["services"].items() if _command(s)[:1] == [command]]
    assert len(matches) == 1, f"expected one compose service running {command}, found {len(matches)}"
    return matches[0]


def test_compose_has_the_infrastructure_images() -> None:
    images = {str(s.get("image", "")).split(":")[0] for s in _compose()["services"].values()}
    missing = {what: repo for what, repo in INFRA_IMAGES.items() if repo not in images}
    assert not missing, f"docker-compose.yml lacks {missing}"


def test_compose_runs_every_service_from_the_dockerfile() -> None:
    services = _compose()["services"]
    for command in SERVICES:
        name, service = _compose_service(command)
        build = service.get("build")
        context = build if isinstance(build, str) else (build or {}).get("context")
        assert context in (".", "./"), f"{name}: not built from the repo's Dockerfile"
        assert service.get("healthcheck", {}).get("test"), f"{name}: no healthcheck"
    assert (ROOT / "Dockerfile").is_file()
    keys = services.get("acm-keys")
    assert keys is not None, "no acm-keys tool service"
    assert "tools" in keys.get("profiles", [])
    assert _command(keys)[:5] == ["acm", "keys", "create", "--client", "demo"]
    assert "--database-url" in _command(keys)


@pytest.mark.parametrize("command", sorted(SERVICES))
def test_compose_env_covers_required_settings(command: str, monkeypatch: pytest.MonkeyPatch) -> None:
    cls = _settings_class(command)
    name, service = _compose_service(command)
    env = _environment(service)
    missing = _required_vars(cls) - set(env)
    assert not missing, f"compose service {name} ({command}) lacks {sorted(missing)} for {cls.__name__}"
    _load_settings(cls, env, monkeypatch)  # the values validate, too
    foreign = _foreign_urls(cls, env)
    assert not foreign, f"compose service {name}: given {foreign}, which {cls.__name__} does not read"
    # The gRPC port (gRPC servers) or the health port (consumers) must be reachable from other
    # containers and from the healthcheck, so it listens on all interfaces, not the 127.0.0.1 default.
    var = "ACM_LISTEN_ADDR" if "listen_addr" in cls.model_fields else "ACM_HEALTH_ADDR"
    assert var in env, f"{name}: {var} not set"
    assert _host_port(env[var])[0] == "0.0.0.0", f"{name}: {var}={env[var]} is not reachable"
    assert env.get("OTEL_SERVICE_NAME"), f"{name}: no OTEL_SERVICE_NAME"
    assert env.get("OTEL_EXPORTER_OTLP_ENDPOINT"), f"{name}: no OTEL_EXPORTER_OTLP_ENDPOINT"
    healthcheck = service["healthcheck"]["test"]
    if healthcheck[0] == "CMD" and healthcheck[1:3] == ["python", "-c"]:
        compile(healthcheck[3], f"{name} healthcheck", "exec")


def test_compose_urls_point_to_compose_services() -> None:
    services = _compose()["services"]
    listen_ports = {
        name: _port(_environment(s)["ACM_LISTEN_ADDR"])
        for name, s in services.items()
        if "ACM_LISTEN_ADDR" in _environment(s)
    }
    for command in SERVICES:
        name, service = _compose_service(command)
        deps = _depends_on(service)
        for key, value in _environment(service).items():
            if key in ("ACM_LISTEN_ADDR", "ACM_HEALTH_ADDR"):
                continue  # where it listens itself (checked above)
            if not (key.endswith(("_URL", "_ADDR")) or key == "OTEL_EXPORTER_OTLP_ENDPOINT"):
                continue
            host, port = _host_port(value)
            assert host in services, f"{name}: {key}={value} names no compose service"
            # The gateway waits for retrieve, architect and compact, so they cannot wait for it; its Keys API is
            # asked per record, and a consumer retries while it is not up.
            if key != "ACM_GATEWAY_ADDR":
                assert host in deps, f"{name}: {key} needs {host} but does not depend on it"
            if key in SERVER_SCHEMES:
                assert urlsplit(value).scheme in SERVER_SCHEMES[key], f"{name}: {key}={value}"
            if host in listen_ports:
                assert port == listen_ports[host], f"{name}: {key}={value}, {host} listens on {listen_ports[host]}"
    keys_command = _command(services["acm-keys"])
    keys_url = keys_command[keys_command.index("--database-url") + 1]
    assert _host_port(keys_url)[0] in services
    assert "postgres" in _depends_on(services["acm-keys"])


def test_compose_otel_collector_config_is_mounted() -> None:
    services = _compose()["services"]
    [collector] = [s for s in services.values() if "opentelemetry-collector" in str(s.get("image", ""))]
    sources = [str(v).split(":")[0] for v in collector.get("volumes", [])]
    assert sources, "the collector mounts no config"
    for source in sources:
        config = yaml.safe_load((ROOT / source).read_text())
        assert "otlp" in config["receivers"]
        for pipeline in config["service"]["pipelines"].values():
            assert set(pipeline["receivers"]) <= set(config["receivers"])
            assert set(pipeline["exporters"]) <= set(config["exporters"])


# --------------------------------------------------------------------------- k8s/ (kustomize)


@pytest.fixture(scope="module")
def kustomize() -> str:
    if shutil.which("go") is None and shutil.which("kustomize") is None:
        # CI always has Go (the machine image ships it); a laptop without either may skip, CI must not.
        if os.environ.get("CI"):
            pytest.fail("CI needs the Go toolchain (or kustomize) to render k8s/")
        pytest.skip("neither the Go toolchain nor kustomize is installed")
    result = subprocess.run(["bash", str(KUSTOMIZE_SH)], capture_output=True, text=True, timeout=900, check=False)
    assert result.returncode == 0, f"kustomize.sh failed:\n{result.stderr}"
    path = result.stdout.strip().splitlines()[-1]
    assert Path(path).is_file(), path
    return path


@pytest.fixture(scope="module", params=OVERLAYS)
def rendered(request: pytest.FixtureRequest, kustomize: str) -> tuple[str, list[dict[str, Any]]]:
    overlay = str(request.param)
    result = subprocess.run(
        [kustomize, "build", str(ROOT / "k8s/overlays" / overlay)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, f"kustomize build {overlay} failed:\n{result.stderr}"
    docs = [d for d in yaml.safe_load_all(result.stdout) if d]
    return overlay, docs


def _by_kind(docs: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {d["metadata"]["name"]: d for d in docs if d["kind"] == kind}


def _containers(deployment: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    yield from deployment["spec"]["template"]["spec"]["containers"]


def _container_env(container: Mapping[str, Any], docs: list[dict[str, Any]]) -> dict[str, str]:
    """What the container's process sees: envFrom ConfigMaps / Secrets, then env values."""
    config_maps, secrets = _by_kind(docs, "ConfigMap"), _by_kind(docs, "Secret")
    env: dict[str, str] = {}
    for source in container.get("envFrom", []):
        if "configMapRef" in source:
            env.update(config_maps[source["configMapRef"]["name"]].get("data", {}))
        if "secretRef" in source:
            secret = secrets[source["secretRef"]["name"]]
            env.update({k: base64.b64decode(v).decode() for k, v in secret.get("data", {}).items()})
            env.update(secret.get("stringData", {}))
    for item in container.get("env", []):
        env[item["name"]] = str(item.get("value", ""))
    return env


@pytest.mark.infra
def test_k8s_has_a_deployment_and_service_per_acm_service(
    rendered: tuple[str, list[dict[str, Any]]],
) -> None:
    overlay, docs = rendered
    deployments, services = _by_kind(docs, "Deployment"), _by_kind(docs, "Service")
    assert set(deployments) == set(SERVICES), f"{overlay}: Deployments {sorted(deployments)}"
    assert set(services) == set(SERVICES), f"{overlay}: Services {sorted(services)}"
    for name, deployment in deployments.items():
        [container] = list(_containers(deployment))
        assert container["command"][:1] == [name], f"{overlay}/{name}: runs {container['command']}"
        pod_labels = deployment["spec"]["template"]["metadata"]["labels"]
        selector = deployment["spec"]["selector"]["matchLabels"]
        assert selector.items() <= pod_labels.items()
        service = services[name]
        assert service["spec"]["selector"].items() <= pod_labels.items(), f"{overlay}/{name}: selector"
        port_names = {p["name"]: p["containerPort"] for p in container["ports"]}
        for port in service["spec"]["ports"]:
            target = port["targetPort"]
            assert target in port_names or target in port_names.values(), f"{overlay}/{name}: {target}"


@pytest.mark.infra
def test_k8s_containers_have_grpc_probes_resources_and_settings(
    rendered: tuple[str, list[dict[str, Any]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    overlay, docs = rendered
    for name, deployment in _by_kind(docs, "Deployment").items():
        pod = deployment["spec"]["template"]["spec"]
        for container in _containers(deployment):
            where = f"{overlay}/{name}/{container['name']}"
            env = _container_env(container, docs)
            cls = _settings_class(name)
            missing = _required_vars(cls) - set(env)
            assert not missing, f"{where}: lacks {sorted(missing)} for {cls.__name__}"
            _load_settings(cls, env, monkeypatch)
            # Each service is given only the stores its settings name: the graph and vectors are retrieve's.
            foreign = _foreign_urls(cls, env)
            assert not foreign, f"{where}: given {foreign}, which {cls.__name__} does not read"
            var = "ACM_LISTEN_ADDR" if "listen_addr" in cls.model_fields else "ACM_HEALTH_ADDR"
            assert _host_port(env.get(var, ""))[0] == "0.0.0.0", f"{where}: {var} must listen on 0.0.0.0"
            port = _port(env[var])
            exposed = {p["containerPort"] for p in container.get("ports", [])}
            assert port in exposed, f"{where}: {var} port {port} is not a containerPort ({exposed})"
            for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
                assert probe in container, f"{where}: no {probe}"
                grpc = container[probe].get("grpc")
                assert grpc, f"{where}: {probe} is not a gRPC probe"
                assert grpc["port"] == port, f"{where}: {probe} port != {var}"
            # Readiness follows the dependencies (the overall status); liveness and startup only the process.
            assert container["readinessProbe"]["grpc"].get("service", "") == "", f"{where}: readiness service"
            for probe in ("livenessProbe", "startupProbe"):
                assert container[probe]["grpc"].get("service") == LIVENESS, f"{where}: {probe} service"
            metrics_port = int(env["ACM_METRICS_PORT"])
            assert {"name": "metrics", "containerPort": metrics_port, "protocol": "TCP"} in container["ports"], where
            annotations = deployment["spec"]["template"]["metadata"].get("annotations", {})
            assert annotations.get("prometheus.io/scrape") == "true", f"{where}: not scraped"
            assert annotations.get("prometheus.io/port") == str(metrics_port), f"{where}: scrape port"
            resources = container.get("resources", {})
            for kind in ("requests", "limits"):
                assert {"cpu", "memory"} <= set(resources.get(kind, {})), f"{where}: resources.{kind}"
            non_root = container.get("securityContext", {}).get(
                "runAsNonRoot", pod.get("securityContext", {}).get("runAsNonRoot")
            )
            assert non_root is True, f"{where}: runAsNonRoot"
            image = str(container["image"])
            if overlay == "dev":
                assert image.endswith(":dev"), f"{where}: image {image}"


@pytest.mark.infra
def test_k8s_overlay_replicas_and_scaling(rendered: tuple[str, list[dict[str, Any]]]) -> None:
    overlay, docs = rendered
    deployments = _by_kind(docs, "Deployment")
    replicas = {name: d["spec"].get("replicas", 1) for name, d in deployments.items()}
    hpas = _by_kind(docs, "HorizontalPodAutoscaler")
    pdbs = _by_kind(docs, "PodDisruptionBudget")
    if overlay == "dev":
        assert set(replicas.values()) == {1}, replicas
        return
    assert replicas["acm-gateway"] == 3
    assert replicas["acm-retrieve"] == 3
    assert replicas["acm-ingest"] == 3
    targets = {h["spec"]["scaleTargetRef"]["name"]: h for h in hpas.values()}
    # KEDA makes its own HPA for a ScaledObject's target: a second one would fight it.
    assert set(targets) == {"acm-gateway"}, f"prod: HPAs for {sorted(targets)}"
    hpa = targets["acm-gateway"]["spec"]
    assert hpa["scaleTargetRef"]["kind"] == "Deployment"
    assert hpa["minReplicas"] <= replicas["acm-gateway"] <= hpa["maxReplicas"]
    assert [m["resource"]["name"] for m in hpa["metrics"]] == ["cpu"]
    scaled = {s["spec"]["scaleTargetRef"]["name"]: s["spec"] for s in _by_kind(docs, "ScaledObject").values()}
    assert set(scaled) == set(LAG_SCALED), f"prod: ScaledObjects for {sorted(scaled)}"
    for name, spec in scaled.items():
        assert 1 <= spec["minReplicaCount"] <= replicas[name] <= spec["maxReplicaCount"], name
        assert spec["maxReplicaCount"] <= PROD_TOPIC_PARTITIONS, f"{name}: more replicas than partitions"
    gateway_labels = deployments["acm-gateway"]["spec"]["template"]["metadata"]["labels"]
    assert any(p["spec"]["selector"]["matchLabels"].items() <= gateway_labels.items() for p in pdbs.values()), (
        "prod: no PodDisruptionBudget for the gateway"
    )


def _subscribed_topics(command: str) -> set[str]:
    """The topics services/<package>/app.py subscribes with the package's GROUP: bus.subscribe(topics.X, GROUP, …)."""
    source = (ROOT / "services" / SERVICES[command] / "app.py").read_text()
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "subscribe":
            topic, group = node.args[:2]
            if isinstance(group, ast.Name) and group.id == "GROUP":
                assert isinstance(topic, ast.Attribute) and isinstance(topic.value, ast.Name), ast.dump(topic)
                assert topic.value.id == "topics", ast.dump(topic)
                found.add(str(getattr(topics, topic.attr)))
    return found


@pytest.mark.infra
def test_k8s_scaled_objects_name_the_codes_consumer_groups(rendered: tuple[str, list[dict[str, Any]]]) -> None:
    """Each ScaledObject's Kafka triggers: the bus's brokers, the service's consumer group (GROUP, after the bus
    URL's namespace prefix, as KafkaBus names it) and exactly the topics the service subscribes with it."""
    overlay, docs = rendered
    scaled = _by_kind(docs, "ScaledObject")
    if overlay == "dev":
        assert not scaled
        return
    deployments = _by_kind(docs, "Deployment")
    for scaled_object in scaled.values():
        assert scaled_object["apiVersion"] == "keda.sh/v1alpha1"
        name = scaled_object["spec"]["scaleTargetRef"]["name"]
        [container] = list(_containers(deployments[name]))
        bus_url = urlsplit(_container_env(container, docs)["ACM_BUS_URL"])
        namespace = dict(p.split("=", 1) for p in bus_url.query.split("&") if p).get("namespace", "")
        group = importlib.import_module(SERVICES[name]).GROUP
        kafka = [t["metadata"] for t in scaled_object["spec"]["triggers"] if t["type"] == "kafka"]
        assert kafka, f"{name}: no kafka trigger"
        for trigger in kafka:
            assert trigger["bootstrapServers"] == bus_url.netloc, f"{name}: {trigger['bootstrapServers']}"
            assert trigger["consumerGroup"] == namespace + group, f"{name}: group {trigger['consumerGroup']}"
            assert int(trigger["lagThreshold"]) > 0, name
            assert trigger.get("allowIdleConsumers", "false") == "false", f"{name}: replicas beyond partitions"
        subscribed = {namespace + t for t in _subscribed_topics(name)}
        assert subscribed, f"{name}: found no subscription with GROUP in its app.py"
        assert {t["topic"] for t in kafka} == subscribed, f"{name}: triggers on {[t['topic'] for t in kafka]}"


# --------------------------------------------------------------------------- who may connect: NetworkPolicy, TLS


def _serves_api(cls: type[ServiceSettings]) -> bool:
    return "listen_addr" in cls.model_fields


def _plaintext_refusal(command: str, env: Mapping[str, str], monkeypatch: pytest.MonkeyPatch) -> str | None:
    """Why the service would refuse to serve its API as configured (acm.transport), or None."""
    cls = _settings_class(command)
    if not _serves_api(cls):
        return None
    settings = _load_settings(cls, env, monkeypatch)
    try:
        ServerTls.of(settings).check(str(settings.model_dump()["listen_addr"]), [command])
    except TransportRefused as exc:
        return str(exc)
    return None


@pytest.mark.parametrize("command", sorted(SERVICES))
def test_compose_services_may_serve_as_configured(command: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Compose listens on 0.0.0.0 in plaintext: each API service must be allowed to (or would exit at start)."""
    refusal = _plaintext_refusal(command, _environment(_compose_service(command)[1]), monkeypatch)
    assert refusal is None, refusal


def _pods(docs: list[dict[str, Any]]) -> dict[str, tuple[dict[str, str], dict[str | int, int]]]:
    """Each Deployment's pod labels, and its container ports by name and by number."""
    pods = {}
    for name, deployment in _by_kind(docs, "Deployment").items():
        ports: dict[str | int, int] = {}
        for container in _containers(deployment):
            for port in container.get("ports", []):
                ports[port["containerPort"]] = ports[port.get("name", port["containerPort"])] = port["containerPort"]
        pods[name] = (deployment["spec"]["template"]["metadata"]["labels"], ports)
    return pods


def _selects(selector: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    assert set(selector) <= {"matchLabels"}, f"{selector}: only matchLabels is read here"
    return bool(selector.get("matchLabels", {}).items() <= labels.items())


def _callers(docs: list[dict[str, Any]]) -> dict[tuple[str, int], set[str]]:
    """(Deployment, container port) -> the Deployments whose settings dial it: an ACM_*_ADDR field of the
    service's settings class (the shared ConfigMap gives every pod all of them) naming its Service."""
    pods, services = _pods(docs), _by_kind(docs, "Service")
    callers: dict[tuple[str, int], set[str]] = {}
    for caller, deployment in _by_kind(docs, "Deployment").items():
        fields = _settings_class(caller).model_fields
        for container in _containers(deployment):
            for key, value in _container_env(container, docs).items():
                if not key.endswith("_ADDR") or key in ("ACM_LISTEN_ADDR", "ACM_HEALTH_ADDR"):
                    continue
                if key.removeprefix("ACM_").lower() not in fields:
                    continue
                host, port = _host_port(value)
                service = services[str(host)]
                [target] = [t for t in service["spec"]["ports"] if t["port"] == port]
                for callee, (labels, ports) in pods.items():
                    if _selects({"matchLabels": service["spec"]["selector"]}, labels):
                        callers.setdefault((callee, ports[target["targetPort"]]), set()).add(caller)
    return callers


@pytest.mark.infra
def test_k8s_network_policies_admit_only_the_callers(
    rendered: tuple[str, list[dict[str, Any]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ingress is denied by default; the gateway's gRPC port is open to all; another gRPC port admits exactly
    the services whose settings dial it; every metrics port the monitoring namespace; nothing else (the
    consumers' health ports: the kubelet only). Every policy selects pods, and names ports they have."""
    overlay, docs = rendered
    policies, pods = _by_kind(docs, "NetworkPolicy"), _pods(docs)
    deny = policies.pop("acm-default-deny-ingress")["spec"]
    assert deny == {"podSelector": {}, "policyTypes": ["Ingress"]}, f"{overlay}: default deny {deny}"
    admitted: dict[tuple[str, int], set[str]] = {}
    for name, policy in policies.items():
        spec = policy["spec"]
        assert spec["policyTypes"] == ["Ingress"], f"{overlay}/{name}"
        selected = [pod for pod, (labels, _) in pods.items() if _selects(spec["podSelector"], labels)]
        assert selected, f"{overlay}/{name}: selects no pod"
        for rule in spec["ingress"]:
            sources = set()
            for peer in rule.get("from", [{"anywhere": True}]):
                if "podSelector" in peer:
                    peers = [pod for pod, (labels, _) in pods.items() if _selects(peer["podSelector"], labels)]
                    assert peers, f"{overlay}/{name}: a source selects no pod"
                    sources.update(peers)
                elif "namespaceSelector" in peer:
                    sources.add(f"namespace {peer['namespaceSelector']['matchLabels']}")
                else:
                    sources.add("anywhere")
            for pod in selected:
                for port in rule["ports"]:
                    assert port["port"] in pods[pod][1], f"{overlay}/{name}: {pod} has no port {port['port']}"
                    admitted.setdefault((pod, pods[pod][1][port["port"]]), set()).update(sources)
    expected = {key: set(callers) for key, callers in _callers(docs).items()}
    expected[("acm-gateway", pods["acm-gateway"][1]["grpc"])] = {"anywhere"}
    for pod, (_, ports) in pods.items():
        expected[(pod, ports["metrics"])] = {"namespace {'kubernetes.io/metadata.name': 'monitoring'}"}
    assert admitted == expected, f"{overlay}: admitted {admitted}, the code calls {expected}"
    for name, deployment in _by_kind(docs, "Deployment").items():
        [container] = list(_containers(deployment))
        refusal = _plaintext_refusal(name, _container_env(container, docs), monkeypatch)
        assert refusal is None, f"{overlay}/{name}: {refusal}"


@pytest.fixture(scope="module")
def rendered_tls(kustomize: str, tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """The base with the TLS component, as an overlay would add it."""
    overlay = tmp_path_factory.mktemp("tls-overlay")
    k8s = os.path.relpath(ROOT / "k8s", overlay)
    (overlay / "kustomization.yaml").write_text(
        yaml.safe_dump(
            {
                "apiVersion": "kustomize.config.k8s.io/v1beta1",
                "kind": "Kustomization",
                "namespace": "acm-tls",
                "resources": [f"{k8s}/base"],
                "components": [f"{k8s}/components/tls"],
            }
        )
    )
    result = subprocess.run(
        [kustomize, "build", str(overlay)], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, f"kustomize build with components/tls failed:\n{result.stderr}"
    return [d for d in yaml.safe_load_all(result.stdout) if d]


@pytest.mark.infra
def test_k8s_tls_component_mounts_a_certificate_wherever_grpc_is_spoken(
    rendered_tls: list[dict[str, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every service that serves or dials gRPC mounts the Secret of a cert-manager Certificate naming its
    Service and has ACM_TLS_* point into it; a service that requires client certificates is dialled only by
    services that have one; plaintext is no longer allowed; probes go to the plaintext health port; the
    settings load (the mounted files stood in by real ones) and the servers would start."""
    docs = rendered_tls
    assert {d["metadata"].get("namespace") for d in docs if d["kind"] != "Namespace"} == {"acm-tls"}
    certificates = {c["spec"]["secretName"]: c for c in _by_kind(docs, "Certificate").values()}
    for certificate in certificates.values():
        assert certificate["apiVersion"] == "cert-manager.io/v1"
        assert certificate["spec"]["issuerRef"]["name"], certificate["metadata"]["name"]
    callers = _callers(docs)
    speaks_grpc = {callee for callee, _ in callers} | {c for group in callers.values() for c in group}
    authority = Authority(tmp_path / "pki", "stand-in-ca")
    stand_in = authority.issue("stand-in")
    files = {"tls.crt": stand_in.cert_file, "tls.key": stand_in.key_file, "ca.crt": authority.ca_file}
    envs: dict[str, dict[str, str]] = {}
    for name, deployment in _by_kind(docs, "Deployment").items():
        [container] = list(_containers(deployment))
        env = envs[name] = _container_env(container, docs)
        assert "ACM_ALLOW_PLAINTEXT" not in env, f"{name}: plaintext still allowed"
        tls_vars = {k: v for k, v in env.items() if k.startswith("ACM_TLS_")}
        if name not in speaks_grpc:
            assert not tls_vars, f"{name} speaks no gRPC but has {sorted(tls_vars)}"
            continue
        assert {"ACM_TLS_CERT_FILE", "ACM_TLS_KEY_FILE", "ACM_TLS_CA_FILE"} <= set(tls_vars), f"{name}: {tls_vars}"
        volumes = {v["name"]: v for v in deployment["spec"]["template"]["spec"]["volumes"]}
        for var, path in tls_vars.items():
            [mount] = [m for m in container["volumeMounts"] if Path(path).parent == Path(m["mountPath"])]
            secret = volumes[mount["name"]]["secret"]["secretName"]
            assert secret in certificates, f"{name}: {var} is in Secret {secret}, which no Certificate writes"
            assert Path(path).name in files, f"{name}: {var}={path}: cert-manager writes {sorted(files)}"
            service = _by_kind(docs, "Service")[name]
            assert name in certificates[secret]["spec"]["dnsNames"], f"{name}: not a name of its certificate"
            assert _selects(
                {"matchLabels": service["spec"]["selector"]}, deployment["spec"]["template"]["metadata"]["labels"]
            )
        substituted = {k: str(files[Path(v).name]) if k.startswith("ACM_TLS_") else v for k, v in env.items()}
        refusal = _plaintext_refusal(name, substituted, monkeypatch)
        assert refusal is None, f"{name}: {refusal}"
        if _serves_api(_settings_class(name)):
            probe_port = _port(env["ACM_HEALTH_ADDR"])
            assert probe_port in {p["containerPort"] for p in container["ports"]}, name
            for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
                assert container[probe]["grpc"]["port"] == probe_port, f"{name}: {probe} is not on the health port"
    for (callee, _), group in callers.items():
        if "ACM_TLS_CLIENT_CA_FILE" in envs[callee]:
            for caller in group:
                assert "ACM_TLS_CERT_FILE" in envs[caller], f"{caller} dials {callee} without a client certificate"
    assert {"ACM_TLS_CLIENT_CA_FILE" in envs[n] for n in ("acm-retrieve", "acm-architect")} == {True}
