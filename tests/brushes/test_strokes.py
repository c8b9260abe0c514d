"""Dab spacing along the path, leftovers across events, inputs per dab."""

import pytest

from brushes.path import Spacer, StrokePoint, path_length
from brushes.registry import BRUSHES


def _spacer(curves=None, total=None, **params):
    brush = BRUSHES["gain"]
    values, _ = brush.resolve({"radius_ms": 100, "radius_hz": 100, "spacing": 0.5, **params}, "t")
    return Spacer(brush, values, curves or {}, total_length=total)


def test_dabs_every_spacing_radii_along_a_straight_line():
    spacer = _spacer()
    dabs = spacer.to(StrokePoint(1.0, 500)) + spacer.to(StrokePoint(2.0, 500))  # 10 radii
    assert len(dabs) == 21
    assert [round(d.time, 6) for d in dabs[:3]] == [1.0, 1.05, 1.1]
    assert dabs[-1].time == pytest.approx(2.0)


def test_leftover_distance_carries_across_events():
    one = _spacer()
    whole = one.to(StrokePoint(0.0, 0)) + one.to(StrokePoint(0.73, 730))
    many = _spacer()
    pieces = many.to(StrokePoint(0.0, 0))
    for i in range(1, 74):
        pieces += many.to(StrokePoint(i * 0.01, i * 10.0))
    assert [(round(d.time, 9), round(d.freq, 6)) for d in pieces] == \
        [(round(d.time, 9), round(d.freq, 6)) for d in whole]


def test_pressure_is_interpolated_and_mapped():
    curves = {"opacity": {"pressure": ((0.0, 0.0), (1.0, 1.0))}}
    spacer = _spacer(curves, opacity=0.0)
    dabs = spacer.to(StrokePoint(0.0, 100, 0.0)) + spacer.to(StrokePoint(0.2, 100, 1.0))
    assert [round(d.params["opacity"], 6) for d in dabs] == [0.0, 0.25, 0.5, 0.75, 1.0]


def test_progress_speed_and_random_inputs():
    points = [StrokePoint(0.0, 100, 1, 0.0), StrokePoint(1.0, 100, 1, 2.0)]
    curves = {"opacity": {"progress": ((0.0, 0.0), (1.0, 1.0))},
              "radius_hz": {"speed": ((0.0, 0.0), (10.0, 100.0))},
              "hardness": {"random": ((0.0, 0.0), (1.0, 1.0))}}
    spacer = _spacer(curves, path_length(points, _spacer().params), opacity=0.0, hardness=0.0)
    dabs = spacer.to(points[0]) + spacer.to(points[1])
    assert dabs[0].params["opacity"] == 0.0 and dabs[-1].params["opacity"] == pytest.approx(1.0)
    assert dabs[-1].params["radius_hz"] == pytest.approx(100 + 50)  # 10 radii in 2 s = 5 r/s
    hardness = [d.params["hardness"] for d in dabs]
    assert len(set(hardness)) == len(hardness) and all(0 <= h <= 1 for h in hardness)


def test_step_records_the_motion_since_the_previous_dab():
    spacer = _spacer()
    dabs = spacer.to(StrokePoint(0.0, 100)) + spacer.to(StrokePoint(0.1, 200))
    assert dabs[0].step == (0.0, 0.0)
    # the path is sqrt(2) radii long; dabs fall every 0.5 radii along it
    assert dabs[1].step == pytest.approx((0.1 * 0.5 / 2**0.5, 100 * 0.5 / 2**0.5))
