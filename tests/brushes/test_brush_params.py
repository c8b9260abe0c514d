"""Parameter declarations, input curves, and the generated reference page."""

import math
from pathlib import Path

import pytest

from brushes.params import Param, curve_value, mapped_value, validate_curve
from brushes.registry import BRUSHES, COMMON, markdown
from engine.errors import ParameterError

ROOT = Path(__file__).resolve().parents[2]


def test_every_brush_declares_the_common_dab_parameters():
    names = [p.name for p in COMMON]
    assert names == ["radius_ms", "radius_hz", "radius_cents", "hardness", "opacity", "spacing",
                     "channel"]
    for brush in BRUSHES.values():
        own = [p.name for p in brush.params]
        assert own[:len(names)] == names and len(set(own)) == len(own), brush.name
        for p in brush.params:
            assert p.help, f"{brush.name}.{p.name} needs a help line"
            if not p.choices:
                assert p.min <= p.default <= p.max


@pytest.mark.parametrize("value,words", [
    ("loud", "expected a number, got str 'loud'"), (True, "expected a number, got bool"),
    (1e309, "inf is out of range; allowed 0 to 10 dB"), (-1, "-1 is out of range"),
    (float("nan"), "nan is out of range"), (10**400, "is out of range"),
], ids=["text", "bool", "overflow", "negative", "nan", "huge-int"])
def test_validation_messages(value, words):
    p = Param("level", 1.0, 0.0, 10.0, "dB")
    with pytest.raises(ParameterError, match=words.replace("(", r"\(").replace(")", r"\)")):
        p.validate(value, "params.level")


def test_aliases_and_integers():
    channel = BRUSHES["gain"].param("channel")
    assert channel.validate("all", "x") == -1 and channel.validate(1.0, "x") == 1
    with pytest.raises(ParameterError, match="whole number"):
        channel.validate(0.5, "x")
    assert BRUSHES["gain"].param("gain_db").validate("-inf", "x") == -math.inf


def test_curves_are_piecewise_linear_and_clamped():
    curve = validate_curve([[0, 0], [0.5, 1], [1, 0]], "c")
    assert [curve_value(curve, x) for x in (-1, 0, 0.25, 0.5, 0.75, 1, 2)] == \
        [0, 0, 0.5, 1, 0.5, 0, 0]
    opacity = BRUSHES["gain"].param("opacity")
    assert mapped_value(opacity, 0.0, curves={"pressure": validate_curve([[0, 0.2], [1, 1]], "c")},
                        inputs={"pressure": 0.5}) == pytest.approx(0.6)
    assert mapped_value(opacity, 0.9, curves={"pressure": curve}, inputs={"pressure": 0.5}) == 1.0


@pytest.mark.parametrize("points,words", [
    ([[0, 0]], "2 to 64"), ([[0, 0], [0, 1]], "increase strictly"),
    ([[0, 0], [1]], r"\[1\]: expected \[x, y\]"), ([[0, 0], [1, "a"]], "two finite numbers"),
    ("0,0", "expected a list"),
])
def test_bad_curves(points, words):
    with pytest.raises(ParameterError, match=words):
        validate_curve(points, "inputs.opacity.pressure")


def test_reference_page_is_generated_from_the_declarations():
    assert (ROOT / "docs" / "brushes.md").read_text() == markdown(), \
        "run: python -m brushes.registry docs/brushes.md"
