"""The Analysis panel: its controls generated from engine.transforms.settings (defaults,
ranges, tooltips), driven with the keyboard and the mouse, on its own and in the window."""

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from app.gui.widgets.panels import AnalysisPanel
from engine.transforms.settings import BY_NAME, DEFAULT_OVERLAP, SETTINGS


def items(box) -> list:
    return [box.itemData(i) for i in range(box.count())]


def test_the_panel_shows_the_declared_defaults_ranges_and_help(qtbot):
    panel = AnalysisPanel()
    qtbot.addWidget(panel)
    c = panel.controls
    for name in ("transform", "window"):
        assert items(c[name]) == list(BY_NAME[name].choices)
        assert c[name].currentData() == BY_NAME[name].default
    sizes, n_fft = items(c["n_fft"]), BY_NAME["n_fft"]
    assert (sizes[0], sizes[-1]) == (n_fft.low, n_fft.high)
    assert all(b == 2 * a for a, b in zip(sizes, sizes[1:], strict=False))
    assert c["n_fft"].currentData() == n_fft.default
    assert c["hop"].currentData() == DEFAULT_OVERLAP  # the hop shows as the overlap
    for name in ("bins_per_octave", "fmin"):
        s = BY_NAME[name]
        assert (c[name].minimum(), c[name].maximum(), c[name].value()) == \
            (s.low, s.high, s.default)
    for s in SETTINGS:
        assert s.help in c[s.name].toolTip()
    assert panel.settings() == {"transform": "stft", "n_fft": 2048,
                                "hop": 2048 // DEFAULT_OVERLAP, "window": "hann"}


def test_the_keys_stop_at_the_declared_range_and_re_analyze_sends_it(qtbot):
    panel = AnalysisPanel()
    qtbot.addWidget(panel)
    panel.show()
    qtbot.waitExposed(panel)
    QTest.keyClick(panel.transform, Qt.Key.Key_Down)  # STFT -> constant-Q
    assert panel.bins_per_octave.isEnabled() and not panel.n_fft.isEnabled()
    for name, key in (("bins_per_octave", Qt.Key.Key_PageUp), ("fmin", Qt.Key.Key_PageDown)):
        for _ in range(200):
            QTest.keyClick(panel.controls[name], key)
    with qtbot.waitSignal(panel.applyRequested) as sent:
        QTest.mouseClick(panel.apply, Qt.MouseButton.LeftButton)
    assert sent.args == [{"transform": "cq", "bins_per_octave": BY_NAME["bins_per_octave"].high,
                          "fmin": BY_NAME["fmin"].low}]


def test_a_re_analysis_chosen_in_the_panel_is_the_documents_and_undo_shows_the_last(
        qtbot, window):
    panel, first = window.analysis_panel, window.doc
    before = panel.settings()
    assert first.transform.settings() == before
    QTest.keyClick(panel.n_fft, Qt.Key.Key_Down)  # 2048 -> 4096
    QTest.keyClick(panel.overlap, Qt.Key.Key_Down)  # 4 -> 8
    QTest.keyClick(panel.window, Qt.Key.Key_End)  # blackman-harris
    qtbot.mouseClick(panel.apply, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.doc is not first, timeout=30000)
    assert window.doc.transform.settings() == {"transform": "stft", "n_fft": 4096, "hop": 512,
                                               "window": "blackman-harris"}
    window.undo_stack.undo()
    assert window.doc is first and panel.settings() == before
