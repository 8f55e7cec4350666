"""The providers' shared contract (local and bwrap), the choice of provider, and `python`."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agent.config import AgentConfig, SandboxConfig
from agent.hands import Hands
from agent.sandbox import files
from agent.sandbox.provider import LOCAL_WARNING, Choice, bwrap_works, choose, preflight
from tests.agent.sandbox_support import make_box

PROVIDERS = ["local", "bwrap"]


@pytest.mark.parametrize("name", PROVIDERS)
async def test_huge_output_is_cut_while_read_and_the_command_killed(
    tmp_path: Path, name: str
) -> None:
    box = make_box(tmp_path, name, max_output_mb=1)
    out = await box.sh("yes 0123456789", timeout=20, limit=2000)
    assert "output passed 1 MB; the command was killed" in out
    assert len(out) < 2100


@pytest.mark.parametrize("name", PROVIDERS)
async def test_python_and_the_file_tools_share_the_folders(tmp_path: Path, name: str) -> None:
    box = make_box(tmp_path, name)
    files.write_file(box.fs, "/mnt/user-data/uploads/data.csv", "a,b\n1,2\n", False, 1000)
    out = await box.py(
        "import csv, os\n"
        "rows = list(csv.reader(open('/mnt/user-data/uploads/data.csv')))\n"
        "open('/mnt/user-data/outputs/sum.txt', 'w').write(str(sum(map(int, rows[1]))))\n"
        "print(os.getcwd(), len(rows))\n"
    )
    assert "/mnt/user-data/workspace 2" in out, out
    assert files.read_file(box.fs, "/mnt/user-data/outputs/sum.txt", None, None, 100) == "3"
    assert (box.dirs.outputs / "sum.txt").read_text() == "3"  # what present_files sends
    out = await box.sh(
        "cat /mnt/user-data/outputs/sum.txt; echo; cat /mnt/skills/public/on/SKILL.md"
    )
    assert out.startswith("3\non skill"), out


@pytest.mark.parametrize("name", PROVIDERS)
async def test_exit_codes_and_errors_are_reported(tmp_path: Path, name: str) -> None:
    box = make_box(tmp_path, name)
    assert (await box.sh("echo hi; exit 3")) == "hi\n[exit code 3]"
    out = await box.py("raise SystemExit('bad input')")
    assert "bad input" in out
    assert out.endswith("[exit code 1]")


def test_the_choice_of_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    assert choose(SandboxConfig(provider="local")) == Choice(
        "local", "agent.sandbox.provider is local"
    )
    works, why = bwrap_works()
    auto = choose(SandboxConfig())
    assert auto.name == ("bwrap" if works else "local")
    assert why in auto.reason
    docker = choose(
        SandboxConfig(provider="docker", docker={"image": "python:3.12", "command": "no-such-cli"})
    )
    assert docker.name == "docker"
    assert docker.problem == "no-such-cli: not found on PATH"


def test_docker_needs_an_image() -> None:
    with pytest.raises(ValueError, match=r"docker\.image: required when provider is docker"):
        SandboxConfig(provider="docker")


def test_preflight_says_which_provider_and_refuses_one_that_cannot_run() -> None:
    line, problems, warnings = preflight(SandboxConfig(provider="local", bash_enabled=True))
    assert line == "local (agent.sandbox.provider is local)"
    assert problems == []
    assert warnings == [LOCAL_WARNING]
    cfg = SandboxConfig(
        provider="docker", bash_enabled=True, docker={"image": "x", "command": "no-such-cli"}
    )
    line, problems, _ = preflight(cfg)
    assert line.startswith("docker (agent.sandbox.provider is docker (image x))")
    assert problems == [
        "agent.sandbox.provider: docker cannot run here: no-such-cli: not found on PATH"
    ]
    line, problems, warnings = preflight(SandboxConfig(provider="local"))
    assert line.endswith("bash and python are off (agent.sandbox.bash_enabled)")
    assert problems == warnings == []


def test_python_is_offered_with_bash_only() -> None:
    def names(cfg: AgentConfig) -> set[str]:
        return {t.name for t in Hands(cfg).base_tools()}

    assert {"bash", "python"} <= names(AgentConfig(sandbox={"bash_enabled": True}))
    assert not {"bash", "python"} & names(AgentConfig())


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="bwrap is Linux only")
def test_antler_check_names_the_provider(tmp_path: Path) -> None:
    from tests.bot.test_config import run_cli

    cfg = tmp_path / "c.yaml"
    cfg.write_text(
        "models:\n  - name: a\n    model: m\n"
        "agent:\n  sandbox:\n    provider: local\n    bash_enabled: true\n"
    )
    result = run_cli("check", "--config", str(cfg))
    assert result.returncode == 0, result.stderr
    assert "sandbox: local (agent.sandbox.provider is local)" in result.stdout
    assert "not an isolation boundary" in result.stdout


def test_a_provider_that_cannot_run_stops_the_start(tmp_path: Path) -> None:
    from tests.bot.test_config import run_cli

    cfg = tmp_path / "c.yaml"
    cfg.write_text(
        "models:\n  - name: a\n    model: m\n"
        "agent:\n  sandbox:\n    provider: docker\n    bash_enabled: true\n"
        "    docker: {image: python:3.12-slim, command: no-such-cli}\n"
    )
    result = run_cli("check", "--config", str(cfg))
    assert result.returncode == 2
    assert "agent.sandbox.provider: docker cannot run here: no-such-cli: not found" in result.stderr
    assert "Traceback" not in result.stderr
