"""Pictures in and out of the main window: export the spectrogram as a PNG
(whole file, selection or view; size, axes, colour bar), and import an image
as sound into the selection (or the visible area), one undo step."""

from pathlib import Path

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QSpinBox,
    QStatusBar,
    QWidget,
)

from app.gui.services.opened import OpenDocument
from app.gui.services.prompts import file_dialog
from app.gui.services.window_jobs import Jobs
from app.gui.services.windowstate import WindowState
from app.gui.services.workers import Worker
from app.gui.view.canvas import SpectrogramCanvas
from app.gui.view.imageexport import Picture, save_png, spectrogram_image
from app.gui.widgets.panels import ViewPanel
from app.session.image import Placement, add_coefficients, image_coefficients
from engine.view.render import MAX_SIDE

IMAGE_FILTER = "Images (*.png *.jpg *.jpeg *.bmp *.gif *.tif *.tiff *.webp);;All files (*)"
SCOPES = ("Whole file", "Selection", "Visible area")


class PictureDialog(QDialog):
    """What to export: scope, size in pixels, axes, colour bar."""

    def __init__(self, parent, has_selection: bool):
        super().__init__(parent)
        self.setObjectName("picture-dialog")
        self.setWindowTitle("Export spectrogram image")
        form = QFormLayout(self)
        self.scope = QComboBox()
        self.scope.addItems(SCOPES)
        self.scope.model().item(1).setEnabled(has_selection)
        self.width_px, self.height_px = QSpinBox(), QSpinBox()
        for spin, value in ((self.width_px, 1920), (self.height_px, 1080)):
            spin.setRange(64, MAX_SIDE)
            spin.setValue(value)
            spin.setSuffix(" px")
        self.axes = QCheckBox("time and frequency axes")
        self.colorbar = QCheckBox("colour bar (dB)")
        self.axes.setChecked(True)
        self.colorbar.setChecked(True)
        for label, widget in (("Export", self.scope), ("Width", self.width_px),
                              ("Height", self.height_px), ("", self.axes),
                              ("", self.colorbar)):
            form.addRow(label, widget)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok |
                                   QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)

    def choice(self) -> tuple[str, int, int, bool, bool]:
        """(scope, width, height, axes?, colour bar?) as set: :meth:`ImageActions.picture`'s
        arguments."""
        return (SCOPES[self.scope.currentIndex()], self.width_px.value(),
                self.height_px.value(), self.axes.isChecked(), self.colorbar.isChecked())


class ImageActions:
    """File > Export spectrogram image and Import image as sound, for the ``opened``
    document as ``canvas`` and ``view_panel`` show it; dialogs over ``parent``."""

    def __init__(self, parent: QWidget, opened: OpenDocument, canvas: SpectrogramCanvas,
                 view_panel: ViewPanel, state: WindowState, jobs: Jobs,
                 status: QStatusBar):
        self.parent, self.opened, self.canvas, self.view_panel = parent, opened, canvas, view_panel
        self.state, self.jobs, self.status = state, jobs, status


    def export_png_dialog(self) -> None:
        if self.opened.session is None:
            return
        dialog = PictureDialog(self.parent, self.opened.selection is not None)
        dialog.accepted.connect(lambda: self._ask_picture_path(self.picture(*dialog.choice())))
        dialog.open()

    def _ask_picture_path(self, picture: Picture) -> None:
        """The settings were read when they were accepted: the dialog is gone by the
        time a file is chosen (it deletes itself on closing)."""
        file_dialog(self.parent, self.state, "Export spectrogram image", "PNG image (*.png)",
                    lambda p: self.export_picture(p.with_suffix(".png"), picture),
                    save=True, name=self.state.suggested_name(".png", ""))

    def picture(self, scope: str, width: int, height: int, axes: bool = True,
                colorbar: bool = True) -> Picture:
        """A Picture of the document in the view's style: the whole file, the
        selection or the visible area."""
        doc, view, panel = self.opened.doc, self.canvas.view, self.view_panel
        if scope == "Selection" and self.opened.selection is not None:
            t0, t1, f_lo, f_hi = self.opened.selection.span()
        elif scope == "Visible area":
            t0, t1, f_lo, f_hi = view.t0, view.t1, view.f_lo, view.f_hi
        else:
            t0, t1, f_lo, f_hi = 0.0, doc.length / doc.sample_rate, 0.0, doc.sample_rate / 2
        return Picture(t0, t1, f_lo, f_hi, width, height, axes, colorbar,
                       panel.colormap.currentText(), panel.floor.value(), panel.ceiling.value(),
                       view.log_freq, panel.channel(panel.view_channel))

    def export_picture(self, path: Path, picture: Picture) -> Worker | None:
        doc = self.opened.doc

        def work(**_):
            save_png(spectrogram_image(doc, picture), path)
            return path

        return self.jobs.run(f"Exporting {path.name}", work,
                               lambda p: self.status.showMessage(f"wrote {p}", 5000))

    def import_image_dialog(self) -> None:
        if self.opened.session is not None:
            file_dialog(self.parent, self.state, "Import image as sound", IMAGE_FILTER,
                        self.import_image, save=False)

    def import_image(self, path: Path, placement: Placement | None = None) -> Worker | None:
        """Add ``path``'s picture as sound over ``placement`` (default: the selection,
        else the visible area; rows spaced as the view's frequency axis), on the
        paint channel; one undo step named after the file."""
        image = QImage(str(path))
        if image.isNull():
            self.jobs.show_error(f"{path}: not an image SpectroPaint can read; use PNG, JPEG, "
                            "BMP, GIF, TIFF or WebP")
            return None
        image = image.convertToFormat(QImage.Format.Format_RGBA8888)
        pixels = np.frombuffer(image.constBits(), np.uint8).reshape(
            image.height(), image.bytesPerLine() // 4, 4)[:, :image.width()].copy()
        doc, view = self.opened.doc, self.canvas.view
        if placement is None:
            sel = self.opened.selection
            t0, t1, f_lo, f_hi = sel.span() if sel else (view.t0, view.t1, view.f_lo, view.f_hi)
            seconds, nyquist = doc.length / doc.sample_rate, doc.sample_rate / 2
            placement = Placement(max(t0, 0.0), min(t1, seconds),
                                  max(f_lo, 20.0 if view.log_freq else 1.0),
                                  min(f_hi, nyquist), log=view.log_freq)
        channel = self.opened.channel
        session = self.opened.session

        def done(made):
            rect, added = made
            if self.opened.session is not session:
                return  # another document meanwhile
            step = add_coefficients(doc, rect, added, channel=channel, label=f"image: {path.name}")
            session.push(step)
            session.catch_up()
            self.canvas.update()

        return self.jobs.run(f"Importing {path.name}",
                             lambda progress, cancel: image_coefficients(
                                 doc, pixels, placement=placement, progress=progress,
                                 cancel=cancel),
                             done, blocks_editing=True)
