"""docker-compose.yml, the Dockerfile and constraints.txt, read as Docker and pip read them (no
Docker engine runs here): settings from .env, the internal listener reachable and health-checked,
logs rotated, a restart policy, images pinned by tag, dependencies pinned, a webhook example."""

from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path
from typing import Any

import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
COMPOSE_TEXT = (ROOT / "docker-compose.yml").read_text(encoding="utf-8")
#: A tag naming a release (``7.4.2-alpine``, ``v2.53.3``), not ``latest`` or a bare major.
PINNED = re.compile(r"^[^:@\s]+:v?\d+\.\d+(\.\d+)?[-\w.]*$")


def compose(text: str = COMPOSE_TEXT) -> dict[str, Any]:
    return yaml.safe_load(text)


def dockerfile() -> list[tuple[str, str]]:
    """The Dockerfile's instructions as ``(INSTRUCTION, arguments)``: comments dropped, lines
    continued with a backslash joined."""
    text = re.sub(
        r"\\\n",
        " ",
        "\n".join(
            line
            for line in (ROOT / "Dockerfile").read_text(encoding="utf-8").splitlines()
            if not line.lstrip().startswith("#")
        ),
    )
    return [
        (word.upper(), rest.strip())
        for word, _, rest in (line.strip().partition(" ") for line in text.splitlines())
        if word
    ]


def instructions(name: str) -> list[str]:
    return [arguments for instruction, arguments in dockerfile() if instruction == name]


def env_of_image() -> dict[str, str]:
    env: dict[str, str] = {}
    for arguments in instructions("ENV"):
        env.update(pair.split("=", 1) for pair in arguments.split())
    return env


def bot() -> dict[str, Any]:
    return compose()["services"]["bot"]


def test_every_setting_in_env_reaches_the_bot():
    assert bot()["env_file"] in (".env", [".env"])
    assert (ROOT / ".env.example").is_file()
    assert "BOT_TOKEN=" in (ROOT / ".env.example").read_text()


def test_the_internal_listener_listens_on_every_interface_and_is_health_checked():
    listen = bot()["environment"]["HTTP_LISTEN"]
    assert listen == env_of_image()["HTTP_LISTEN"] == "0.0.0.0:8080"
    port = listen.rpartition(":")[2]
    check = " ".join(bot()["healthcheck"]["test"])
    assert f"http://127.0.0.1:{port}/healthz" in check
    assert port in instructions("EXPOSE")[0].split()
    assert all(not str(p).endswith(f":{port}") for p in bot().get("ports", ())), "the internal listener is published"


def test_a_commented_webhook_example_for_one_replica():
    example = compose(re.sub(r"(?m)^(\s*)# (ports:|  - \"127|WEBHOOK_)", r"\1\2", COMPOSE_TEXT))["services"]["bot"]
    url, listen = example["environment"]["WEBHOOK_URL"], example["environment"]["WEBHOOK_LISTEN"]
    assert url.startswith("https://") and "bot" not in compose()["services"]["bot"]["environment"].get(
        "WEBHOOK_URL", ""
    )
    (published,) = example["ports"]
    assert published.endswith(":" + listen.rpartition(":")[2])
    assert "--scale bot=" in COMPOSE_TEXT and "one replica" in COMPOSE_TEXT


def test_logs_are_rotated_and_restarts_chosen():
    for name, service in compose()["services"].items():
        assert service["logging"]["driver"] == "json-file", name
        assert re.fullmatch(r"\d+[km]", service["logging"]["options"]["max-size"]), name
        assert service["restart"] == "unless-stopped", name
    # the choice and what a start-up error (exit 2) does are written beside it
    assert "exit 2" in COMPOSE_TEXT and "on-failure" in COMPOSE_TEXT
    assert "Restarting (2)" in (ROOT / "docs" / "OPERATING.md").read_text(encoding="utf-8")


def test_images_are_pinned_by_tag():
    images = [service["image"] for name, service in compose()["services"].items() if "build" not in service]
    images += [arguments.split()[0] for arguments in instructions("FROM")]
    assert len(images) == 4
    for image in images:
        assert PINNED.match(image) and "latest" not in image, image


def test_the_image_installs_the_pinned_dependencies():
    (run,) = [arguments for arguments in instructions("RUN") if "pip install" in arguments]
    assert re.search(r"pip install -c constraints\.txt \.(\s|$)", run)
    copied = [arguments.split()[:-1] for arguments in instructions("COPY")]
    assert any("constraints.txt" in sources for sources in copied)


def constraints() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("==")
            assert version and re.fullmatch(r"[\w.+-]+", version), line
            pins[canonicalize_name(name)] = version
    return pins


def test_every_runtime_dependency_is_pinned_to_what_the_tests_run_on():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    pins = constraints()
    for dependency in map(Requirement, project["dependencies"]):
        name = canonicalize_name(dependency.name)
        assert name in pins, f"{name} is not in constraints.txt"
        assert dependency.specifier.contains(pins[name]), (name, pins[name], str(dependency.specifier))
        for extra in dependency.extras:  # e.g. redis[hiredis]: hiredis pinned too
            for required in map(Requirement, metadata.requires(dependency.name) or []):
                if required.marker and required.marker.evaluate({"extra": extra}):
                    assert canonicalize_name(required.name) in pins, (name, extra, required.name)
    # .ci/run installs the test environment with -c constraints.txt
    for name, version in pins.items():
        assert metadata.version(name) == version, name
