"""deploy/grafana: the dashboard is a valid Grafana dashboard whose every PromQL expression
names only metrics the services export, and every metric the services export has a panel;
the provisioning files point Grafana at it."""

from __future__ import annotations

import copy
import importlib
import json
import pathlib
import re
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from services.common.metrics import REGISTRY, exported_names

GRAFANA = pathlib.Path(__file__).resolve().parents[2] / "deploy" / "grafana"
DASHBOARD = GRAFANA / "zocrates.json"

# Every module that defines metrics on the shared registry (one process imports some of them).
METRIC_MODULES = (
    "services.common.metrics",
    "services.gateway.metrics",
    "services.compactor.metrics",
    "services.sessions.metrics",
    "services.reranker.batching",
    "services.reranker.service",
    "services.library.metrics",
    "services.agent.servicer",
    "services.agent.research.usage",
)

_PROMQL_KEYWORDS = {
    "by",
    "without",
    "on",
    "ignoring",
    "group_left",
    "group_right",
    "bool",
    "offset",
    "and",
    "or",
    "unless",
    "inf",
    "nan",
}


def _exported() -> set[str]:
    for module in METRIC_MODULES:
        importlib.import_module(module)
    return exported_names(REGISTRY)


def _families() -> set[str]:
    _exported()
    return {f.name for f in REGISTRY.collect() if f.name.startswith("zocrates_")}


def promql_metric_names(expr: str) -> set[str]:
    """The metric names an expression selects: identifiers that are not functions, keywords,
    label names (in ``{...}``, ``by (...)``, ``without (...)``, ``on (...)``) or literals."""
    expr = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)  # strings (label values, regexes)
    expr = re.sub(r"\{[^}]*\}", "", expr)  # label matchers
    expr = re.sub(
        r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", "", expr
    )  # grouping labels
    expr = re.sub(r"\[[^\]]*\]", "", expr)  # ranges and subqueries: [5m], [$__rate_interval]
    expr = re.sub(r"\$\w+|\$\{[^}]*\}", "", expr)  # Grafana variables
    names = set()
    for match in re.finditer(r"(?<![\w.])([A-Za-z_:][\w:]*)(\s*\()?", expr):
        name, call = match.group(1), match.group(2)
        if call or name.lower() in _PROMQL_KEYWORDS:
            continue
        names.add(name)
    return names


def _panels(panels: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for panel in panels:
        yield panel
        yield from _panels(panel.get("panels") or [])


def unknown_metrics(dashboard: dict[str, Any], exported: set[str]) -> list[tuple[str, str]]:
    """(panel title, metric name) for each name an expression uses that nothing exports."""
    return [
        (panel.get("title", ""), name)
        for panel in _panels(dashboard["panels"])
        for target in panel.get("targets") or []
        for name in sorted(promql_metric_names(target.get("expr", "")))
        if name not in exported
    ]


@pytest.fixture(scope="module")
def dashboard() -> dict[str, Any]:
    data = json.loads(DASHBOARD.read_text())
    assert isinstance(data, dict)
    return data


def test_it_is_a_grafana_dashboard(dashboard: dict[str, Any]) -> None:
    assert isinstance(dashboard["schemaVersion"], int) and dashboard["schemaVersion"] >= 36
    assert dashboard["title"] and re.fullmatch(r"[\w-]{1,40}", dashboard["uid"])
    panels = list(_panels(dashboard["panels"]))
    assert panels
    ids = [p["id"] for p in panels]
    assert all(isinstance(i, int) for i in ids) and len(ids) == len(set(ids)), ids
    cells: set[tuple[int, int]] = set()
    for panel in panels:
        grid = panel["gridPos"]
        assert {"h", "w", "x", "y"} <= grid.keys(), panel["title"]
        assert all(isinstance(grid[k], int) and grid[k] >= 0 for k in "hwxy"), panel["title"]
        assert grid["w"] >= 1 and grid["h"] >= 1 and grid["x"] + grid["w"] <= 24, panel["title"]
        # No two panels overlap on the 24-column grid.
        mine = {
            (x, y)
            for x in range(grid["x"], grid["x"] + grid["w"])
            for y in range(grid["y"], grid["y"] + grid["h"])
        }
        assert not mine & cells, f"panel {panel['title']!r} overlaps another"
        cells |= mine
        assert panel["type"] in {"row", "timeseries", "stat", "gauge", "bargauge", "table"}


def test_queries_go_through_the_prometheus_datasource_variable(dashboard: dict[str, Any]) -> None:
    (variable,) = [v for v in dashboard["templating"]["list"] if v["type"] == "datasource"]
    assert variable["query"] == "prometheus"
    name = variable["name"]
    for panel in _panels(dashboard["panels"]):
        if panel["type"] == "row":
            continue
        assert panel["targets"], panel["title"]
        refs = [t["refId"] for t in panel["targets"]]
        assert len(refs) == len(set(refs)), panel["title"]
        for source in (panel["datasource"], *(t["datasource"] for t in panel["targets"])):
            assert source == {"type": "prometheus", "uid": f"${{{name}}}"}, panel["title"]


def test_every_expression_names_exported_metrics_only(dashboard: dict[str, Any]) -> None:
    assert unknown_metrics(dashboard, _exported()) == []


def test_every_exported_metric_has_a_panel(dashboard: dict[str, Any]) -> None:
    used = {
        name
        for panel in _panels(dashboard["panels"])
        for target in panel.get("targets") or []
        for name in promql_metric_names(target["expr"])
    }
    suffixes = ("_total", "_bucket", "_count", "_sum")
    families = used | {n[: -len(s)] for n in used for s in suffixes if n.endswith(s)}
    missing = {f for f in _families() if f not in families}
    assert not missing, f"no panel shows {sorted(missing)}"


def test_a_metric_nobody_exports_is_caught(dashboard: dict[str, Any]) -> None:
    broken = copy.deepcopy(dashboard)
    panel = next(p for p in _panels(broken["panels"]) if p.get("targets"))
    panel["targets"][0]["expr"] = (
        'sum by (outcome) (rate(zocrates_gateway_turns_totl{route="chat"}[$__rate_interval]))'
        " / ignoring (outcome) group_left sum(zocrates_gateway_active_chats)"
    )
    assert unknown_metrics(broken, _exported()) == [(panel["title"], "zocrates_gateway_turns_totl")]
    # A histogram is queried by its series, not its family name.
    panel["targets"][0]["expr"] = "rate(zocrates_compactor_evaluation_duration_seconds[5m])"
    assert unknown_metrics(broken, _exported()) == [
        (panel["title"], "zocrates_compactor_evaluation_duration_seconds")
    ]


def test_promql_names_skip_functions_labels_and_keywords() -> None:
    expr = (
        "histogram_quantile(0.95, sum by (le, batcher) "
        '(rate(zocrates_reranker_batch_items_bucket{batcher=~"embed.*"}[$__rate_interval]))) '
        "> bool 2 and on (batcher) zocrates_reranker_request_items_count offset 5m"
    )
    assert promql_metric_names(expr) == {
        "zocrates_reranker_batch_items_bucket",
        "zocrates_reranker_request_items_count",
    }


def test_provisioning_points_grafana_at_the_dashboard() -> None:
    provisioning = GRAFANA / "provisioning"
    datasources = yaml.safe_load((provisioning / "datasources" / "prometheus.yaml").read_text())
    (source,) = datasources["datasources"]
    assert datasources["apiVersion"] == 1 and source["type"] == "prometheus" and source["url"]
    dashboards = yaml.safe_load((provisioning / "dashboards" / "zocrates.yaml").read_text())
    (provider,) = dashboards["providers"]
    assert dashboards["apiVersion"] == 1 and provider["type"] == "file"
    assert provider["options"]["path"].startswith("/")


def test_prometheus_scrapes_every_service_admin_port_of_the_compose_stack() -> None:
    from services.common import ports

    root = pathlib.Path(__file__).resolve().parents[2]
    config = yaml.safe_load((root / "deploy" / "prometheus" / "prometheus.yml").read_text())
    compose = yaml.safe_load((root / "deploy" / "compose.yaml").read_text())
    base = int(compose["x-env"]["ZOCRATES_PORT"])
    (job,) = config["scrape_configs"]
    targets = {static["labels"]["service"]: static["targets"] for static in job["static_configs"]}
    assert set(targets) == set(ports.SERVICE_OFFSETS) <= set(compose["services"])
    for service, (target,) in targets.items():
        assert target == f"{service}:{ports.admin_port(base, service)}", service
