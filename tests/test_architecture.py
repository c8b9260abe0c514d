"""engine/ and brushes/ run headless: importing them loads no Qt, OpenGL or app; the
app's Qt-free wings load no Qt either."""

import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_engine_and_brushes_import_no_gui():
    modules = [m.name for pkg in ("engine", "brushes")
               for m in pkgutil.walk_packages([str(ROOT / pkg)], prefix=f"{pkg}.")]
    assert "engine.model.document" in modules
    code = ("import importlib, sys\n"
            f"for m in {modules!r}: importlib.import_module(m)\n"
            "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
            "('PySide6', 'OpenGL', 'app'))\n"
            "print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


@pytest.mark.slow
def test_the_qt_free_wings_import_no_gui():
    """app.session, app.cli, app.batch and app.project (and the parser) load no Qt, OpenGL
    or app.gui: scripts, the command line and batches run on machines without a display."""
    modules = [m.name for pkg in ("session", "cli", "batch", "project")
               for m in pkgutil.walk_packages([str(ROOT / "app" / pkg)], prefix=f"app.{pkg}.")]
    assert "app.batch.jobs" in modules and "app.project.read" in modules
    assert "app.session.editor" in modules
    code = ("import importlib, sys\n"
            f"for m in {modules!r}: importlib.import_module(m)\n"
            "import app.cli.commands; app.cli.commands.build_parser()\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'OpenGL') "
            "or m.startswith('app.gui') or m == 'app.main'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_brushes_know_no_transform_internals():
    """Kernels, and the editing operations over them, get bins, frames, resolutions and
    phase advance from Transform methods, so they paint the same on an STFT and a
    constant-Q document."""
    internals = re.compile(r"\.(n_fft|window_name|bands|block_frames|window_frames|edge)\b|"
                           r"\bSTFT\b|\bConstantQ\b|bin_hz")
    files = [*(ROOT / "brushes").rglob("*.py"), *(ROOT / "app" / "session").rglob("*.py")]
    hits = [f"{path.name}:{i}: {line.strip()}" for path in files
            for i, line in enumerate(path.read_text().splitlines(), 1) if internals.search(line)]
    assert hits == []


@pytest.mark.slow
def test_the_painting_modules_start_without_scipy_signal():
    """What every batch worker, `specpaint apply` and the window import to paint loads
    no scipy.signal: it alone took about 1.2 s of each process's start-up (de-click
    needed only an FIR filter, np.convolve)."""
    code = ("import sys, app.batch.jobs, app.session.editor, app.session.repairs\n"
            "print(sorted(m for m in sys.modules if m.startswith('scipy.signal')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_no_two_modules_share_a_file_name():
    """One name, one meaning, for modules too (issue 47: main.py, layers.py, jobs.py ...
    each meant two or three things)."""
    names: dict[str, list[str]] = {}
    for pkg in ("engine", "brushes", "app"):
        for path in (ROOT / pkg).rglob("*.py"):
            if path.name not in ("__init__.py", "__main__.py"):
                names.setdefault(path.name, []).append(str(path.relative_to(ROOT)))
    assert {n: p for n, p in names.items() if len(p) > 1} == {}


def test_every_module_is_in_the_architecture_catalogue():
    """docs/architecture.md's "Every module" lists each module under its folder, and
    nothing that is gone."""
    text = (ROOT / "docs" / "architecture.md").read_text().split("## Every module", 1)[1]
    listed = {f"{folder}/{name}" for folder, rows in
              re.findall(r"\*\*`([\w/]+)/`\*\*\n(.*?)(?=\n\*\*`|\Z)", text, re.S)
              for name in re.findall(r"^\| `(\w+\.py)` \|", rows, re.M)}
    modules = {str(p.relative_to(ROOT)) for pkg in ("engine", "brushes", "app")
               for p in (ROOT / pkg).rglob("*.py")
               if p.name != "__main__.py" and (p.name != "__init__.py" or p.stat().st_size > 400)}
    assert sorted(modules - listed) == [] and sorted(listed - modules) == []


def test_kernels_touch_only_the_surface_of_the_document():
    """Issue 47: kernels saw the whole Document (its layers, history, audio). Now they see
    a Surface (brushes.surface): every attribute a kernel reads of ``surface`` (or
    ``ctx.surface``) is one of its members, and the Document has each of them."""
    import ast

    from brushes.surface import Surface
    from tests.conftest import document

    members = set(Surface.__annotations__) | {
        name for name in vars(Surface) if not name.startswith("_")}
    doc = document(np.zeros((1, 4096)), 22050)
    assert all(hasattr(doc, name) for name in members), members - set(dir(doc))
    used = {}
    for path in sorted((ROOT / "brushes" / "kernels").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and (
                    isinstance(node.value, ast.Name) and node.value.id == "surface" or
                    isinstance(node.value, ast.Attribute) and node.value.attr == "surface"):
                used.setdefault(node.attr, path.name)
    assert {"transform", "read_complex", "frame_of", "original"} <= set(used)
    assert set(used) <= members, {a: used[a] for a in set(used) - members}


def test_the_actions_take_the_session_and_services_not_the_window():
    """Issue 47: controllers took the window and called back into it. Each of
    app/gui/actions takes what it uses (the opened session, services, a parent widget),
    and file work what it asks of the window through a DocumentHost, every use of
    which is one of the protocol's members."""
    import ast
    import importlib
    import inspect

    from app.gui.actions.fileactions import DocumentHost

    for path in sorted((ROOT / "app" / "gui" / "actions").glob("*.py")):
        module = importlib.import_module(f"app.gui.actions.{path.stem}")
        for cls in vars(module).values():
            if inspect.isclass(cls) and cls.__module__ == module.__name__:
                assert "window" not in inspect.signature(cls.__init__).parameters, cls
    members = set(DocumentHost.__annotations__) | {
        name for name in vars(DocumentHost) if not name.startswith("_")}
    used = {node.attr for node in ast.walk(ast.parse(
        (ROOT / "app" / "gui" / "actions" / "fileactions.py").read_text()))
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute)
        and node.value.attr == "host"}
    assert used and used <= members, used - members


def test_no_test_module_imports_another():
    """Issue 47: test modules imported helpers from each other (23 times, then 25 after
    the tests moved into folders); shared helpers live in helper modules and shared
    fixtures in tests/conftest.py. Only test_gui_menus' `covered` reads test modules,
    to find which test drives each menu entry."""
    import re

    found = [f"{p.relative_to(ROOT)}: {m.group(0)}" for p in (ROOT / "tests").rglob("test_*.py")
             for m in re.finditer(r"^\s*from tests(\.\w+)*\.test_\w+ import .*$|"
                                  r"^\s*from tests(\.\w+)* import \(?\s*test_\w+", p.read_text(),
                                  re.M)
             if p.name != "test_gui_menus.py"]
    assert found == [], found
