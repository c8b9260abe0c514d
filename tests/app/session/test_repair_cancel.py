"""Cancel reaches every long pass of a whole-file repair (issue 50, item 6: 5.5-5.9 s
to stop a repair of 10 minutes of stereo; bench/bench_cancel.py measures it): the
de-noise's noise learning and the pipeline's copies look at the flag between pieces
of their work, so a Cancel set before them stops them, and nothing changes."""

import threading

import numpy as np
import pytest
import torch

from app.session.repairs import prepare
from engine.errors import Cancelled
from engine.io.audio import Audio
from engine.model.document import Document
from engine.repair.denoise_noise import learnt_power, power_frames

SR = 16000


class SetAfter:
    """A cancel flag that says it is set from its ``n``-th look on, and counts looks."""

    def __init__(self, n: int):
        self.n, self.looks = n, 0

    def is_set(self) -> bool:
        self.looks += 1
        return self.looks >= self.n


def test_the_noise_learning_looks_at_cancel_between_its_pieces(rng):
    x = rng.normal(0, 0.1, (2, 90 * SR))  # 5,600 frames of 512: two pieces
    for work in (lambda flag: power_frames(x, 512, flag),
                 lambda flag: learnt_power(x, np.zeros(x.shape, bool), n_fft=512,
                                           sample_rate=SR, adaptive=False, cancel=flag)):
        flag = SetAfter(2)  # the second piece
        with pytest.raises(Cancelled):
            work(flag)
        assert flag.looks == 2


@pytest.mark.parametrize("name", ["denoise", "declick"])
def test_a_repair_cancelled_before_its_module_runs_changes_nothing(rng, name):
    x = (rng.normal(0, 0.05, (2, 5 * SR))).astype(np.float32)
    doc = Document(Audio(x, SR), device="cpu")
    before = doc.coefficients(0, doc.n_frames).clone()
    flag = threading.Event()
    flag.set()
    with pytest.raises(Cancelled):
        prepare(doc, x, name, cancel=flag)
    assert torch.equal(doc.coefficients(0, doc.n_frames), before)
