"""The recipes of docs/architecture.md, enforced: every entry of every registry (brushes,
transforms, repair modules, commands) has what its recipe asks for, so a step a
newcomer skips fails here, naming the entry and the step."""

import re
from pathlib import Path

import pytest

from app.cli.commands import COMMANDS
from app.session.repairs import MODULES
from brushes.registry import BRUSHES
from engine.transforms.settings import KINDS

ROOT = Path(__file__).resolve().parent.parent


def text(*paths: str) -> str:
    return "\n".join((ROOT / p).read_text() for p in paths)


def missing(name: str, places: dict[str, bool]) -> list[str]:
    return [f"{name}: {step}" for step, found in places.items() if not found]


@pytest.mark.parametrize("brush", sorted(BRUSHES))
def test_a_brush_has_its_measured_test_its_docs_section_and_its_bench_row(brush):
    word = rf"""["'`]{re.escape(brush)}["'`]"""
    assert missing(brush, {
        "a test on both transforms (tests/brushes/test_kernels.py or test_brush_measured.py)":
            re.search(word, text("tests/brushes/test_kernels.py",
                                 "tests/brushes/test_brush_measured.py")),
        "a section in docs/brushes.md (python -m brushes.registry > docs/brushes.md)":
            f"## `{brush}`" in text("docs/brushes.md"),
        "a row in bench/bench_brushes.py (it paints every brush of the registry)":
            "for brush in BRUSHES" in text("bench/bench_brushes.py"),
    }) == []


@pytest.mark.parametrize("kind", KINDS)
def test_a_transform_has_its_picture_test_its_docs_and_its_bench_row(kind):
    word = rf"""["'`]{kind}["'`]"""
    assert missing(kind, {
        "a picture test (tests/engine/test_picture.py)":
            re.search(word, text("tests/engine/test_picture.py")),
        "its notes in docs/engine.md": re.search(word, text("docs/engine.md")),
        "a row in bench/bench_transforms.py": re.search(word, text("bench/bench_transforms.py")),
    }) == []


@pytest.mark.parametrize("module", sorted(MODULES))
def test_a_repair_module_has_its_contract_test_docs_row_bench_row_and_cli_test(module):
    word = rf"""["'`]{module}["'`]"""
    tests = "\n".join(p.read_text() for p in (ROOT / "tests").rglob("test_*.py"))
    assert missing(module, {
        "the contract on real takes (tests/engine/test_repair_contract.py)":
            re.search(word, text("tests/engine/test_repair_contract.py")),
        "a row in docs/restoration.md's table": f"| `{module}` |" in text("docs/restoration.md"),
        "a row in bench/bench_repair.py": re.search(word, text("bench/bench_repair.py")),
        "a test of `specpaint repair` with it":
            re.search(rf"""["']repair["'],\s*["']{module}["']""", tests),
    }) == []


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_command_is_documented_and_run_by_a_test(command):
    docs = text("README.md", *(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md")))
    tests = "\n".join(p.read_text() for p in (ROOT / "tests").rglob("test_*.py"))
    assert missing(command, {
        "a command line in README.md or docs/": re.search(rf"specpaint {command}\b", docs),
        "a test that runs it": re.search(
            rf"""(specpaint(_here)?\(|main\(\[|run\(capsys, )\s*["']{command}["']""", tests),
    }) == []
