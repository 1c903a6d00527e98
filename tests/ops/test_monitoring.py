"""monitoring/: every metric the dashboard, the alert rules and the Prometheus config name is one
the bot exports (tgbot/metrics.py, in prometheus-client's default registry), every metric of the
bot is shown or alerted on, and the files point at each other and at docker-compose.yml as
Prometheus, Grafana and Docker read them. (.ci/run checks the syntax with promtool.)"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client import REGISTRY

import tgbot.metrics  # noqa: F401  (registers the bot's metrics)

ROOT = Path(__file__).resolve().parents[2]
MONITORING = ROOT / "monitoring"
DASHBOARD = MONITORING / "grafana" / "dashboards" / "cheat-bot.json"
#: Series Prometheus makes itself, not the bot.
PROMETHEUS_OWN = {"up", "scrape_duration_seconds", "scrape_samples_scraped", "ALERTS", "ALERTS_FOR_STATE"}
_SUFFIXES = {
    "counter": ("_total", "_created"),
    "gauge": ("",),
    "histogram": ("_bucket", "_sum", "_count", "_created"),
    "summary": ("", "_sum", "_count", "_created"),
    "info": ("_info",),
    "stateset": ("",),
    "unknown": ("",),
}
_KEYWORDS = {"and", "or", "unless", "bool", "offset", "inf", "nan", "atan2"}
_GROUPING = re.compile(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)")
_NAME = re.compile(r"(?<![\w.$])([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?")


def metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression reads (functions, aggregations, grouping labels,
    label matchers, ranges and Grafana's ``$variables`` left out)."""
    expr = re.sub(r'"(?:\\.|[^"\\])*"', '""', expr)
    expr = re.sub(r"\{[^}]*\}", "", expr)
    expr = re.sub(r"\[[^\]]*\]", "", expr)
    expr = _GROUPING.sub("", expr)
    return {m[1] for m in _NAME.finditer(expr) if not m[2] and m[1].lower() not in _KEYWORDS}


def exported() -> set[str]:
    """Every series name the bot's ``/metrics`` can carry."""
    return {family.name + suffix for family in REGISTRY.collect() for suffix in _SUFFIXES[family.type]}


def bot_families() -> set[str]:
    return {family.name for family in REGISTRY.collect() if family.name.startswith("cheat_")}


def dashboard_exprs() -> Iterator[tuple[str, str]]:
    def walk(panels: list[dict[str, Any]]) -> Iterator[tuple[str, str]]:
        for panel in panels:
            for target in panel.get("targets", ()):
                yield panel["title"], target["expr"]
            yield from walk(panel.get("panels", []))

    yield from walk(json.loads(DASHBOARD.read_text(encoding="utf-8"))["panels"])


def rule_exprs() -> Iterator[tuple[str, str]]:
    for group in yaml.safe_load((MONITORING / "alerts.yml").read_text(encoding="utf-8"))["groups"]:
        for rule in group["rules"]:
            yield rule.get("alert") or rule["record"], rule["expr"]


def config_exprs() -> Iterator[tuple[str, str]]:
    """Metric names the Prometheus config matches in relabelling (``__name__``)."""
    config = yaml.safe_load((MONITORING / "prometheus.yml").read_text(encoding="utf-8"))
    for job in config["scrape_configs"]:
        for relabel in job.get("metric_relabel_configs", []):
            if "__name__" in relabel.get("source_labels", []):
                yield job["job_name"], relabel["regex"]


def test_the_expression_parser():
    assert metric_names(
        'histogram_quantile(0.95, sum by (le, method) (rate(a_bucket{job="x", le=~"1|b"}[$__rate_interval])))'
        " and sum without (kind) (b_total offset 5m) > 2 or vector(0) * 2^30 + c:rule"
    ) == {"a_bucket", "b_total", "c:rule"}
    assert metric_names('(sum(up{job="cheat-bot"}) or vector(0)) < 1') == {"up"}


@pytest.mark.parametrize("source", [dashboard_exprs, rule_exprs])
def test_every_metric_named_is_exported(source):
    known = exported() | PROMETHEUS_OWN
    named = {(where, name) for where, expr in source() for name in metric_names(expr)}
    assert named, "no expression found"
    assert {(where, name) for where, name in named if name not in known} == set()


def test_the_config_names_only_exported_metrics():
    known = exported() | PROMETHEUS_OWN
    for job, regex in config_exprs():
        assert any(re.fullmatch(regex, name) for name in known), (job, regex)


def test_every_bot_metric_is_shown_or_alerted_on():
    named = {name for _, expr in [*dashboard_exprs(), *rule_exprs()] for name in metric_names(expr)}
    shown = {family for family in bot_families() if any(n.startswith(family) for n in named)}
    assert bot_families() - shown == set()


def compose() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text(encoding="utf-8"))


def test_prometheus_scrapes_every_replica_of_the_bot_service():
    config = yaml.safe_load((MONITORING / "prometheus.yml").read_text(encoding="utf-8"))
    (job,) = [job for job in config["scrape_configs"] if job["job_name"] == "cheat-bot"]
    assert job.get("metrics_path", "/metrics") == "/metrics"
    (discovery,) = job["dns_sd_configs"]
    services = compose()["services"]
    listen_port = int(services["bot"]["environment"]["HTTP_LISTEN"].rpartition(":")[2])
    assert discovery["type"] == "A" and discovery["port"] == listen_port
    assert discovery["names"] == ["bot"] and "bot" in services
    for rule_file in config["rule_files"]:
        assert (MONITORING / rule_file).is_file()
    for _, expr in rule_exprs():
        for job_name in re.findall(r'job="([^"]+)"', expr):
            assert job_name in {job["job_name"] for job in config["scrape_configs"]}


def test_the_monitoring_profile_mounts_what_is_provisioned():
    services = compose()["services"]
    assert services["prometheus"]["profiles"] == ["monitoring"] == services["grafana"]["profiles"]
    assert "profiles" not in services["bot"] and "profiles" not in services["redis"]
    mounts = {
        target: ROOT / source.removeprefix("./")
        for service in ("prometheus", "grafana")
        for source, target, *_ in (volume.split(":") for volume in services[service]["volumes"])
        if source.startswith("./")
    }
    assert all(path.exists() for path in mounts.values()), mounts
    prometheus_config = next(arg for arg in services["prometheus"]["command"] if arg.startswith("--config.file="))
    assert mounts[prometheus_config.partition("=")[2]] == MONITORING / "prometheus.yml"
    for rule_file in yaml.safe_load((MONITORING / "prometheus.yml").read_text(encoding="utf-8"))["rule_files"]:
        assert mounts["/etc/prometheus/" + rule_file] == MONITORING / rule_file
    provisioning = mounts["/etc/grafana/provisioning"]
    (provider,) = yaml.safe_load((provisioning / "dashboards" / "cheat-bot.yml").read_text())["providers"]
    assert mounts[provider["options"]["path"]] == DASHBOARD.parent
    (source,) = yaml.safe_load((provisioning / "datasources" / "prometheus.yml").read_text())["datasources"]
    assert source["url"] == "http://prometheus:9090"
    uids = {t["datasource"]["uid"] for p in json.loads(DASHBOARD.read_text())["panels"] for t in p.get("targets", ())}
    assert uids == {source["uid"]}


def test_the_operators_guide_lists_every_metric_and_only_those():
    guide = (ROOT / "docs" / "OPERATING.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"^\| `(cheat_\w+)` \|", guide, re.MULTILINE))
    assert listed <= exported() | bot_families()  # a histogram by its family name
    named = {n.removesuffix("_total").removesuffix("_info") for n in listed}
    assert bot_families() - named == set()
    for alert in re.findall(r"^      - alert: (\w+)$", (MONITORING / "alerts.yml").read_text(), re.MULTILINE):
        assert f"`{alert}`" in guide, alert
    assert "RestartPreventExitStatus=2" in guide
