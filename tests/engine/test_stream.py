"""The streamed round trip (no document) gives what a document's resynthesis gives."""

import numpy as np
import pytest

from engine.io import stream
from engine.measure.metrics import snr_db
from engine.model.resynth import Resynthesizer
from engine.transforms import make
from tests.conftest import document


@pytest.mark.parametrize("kind", ["stft", "cq"])
def test_the_streamed_round_trip_equals_a_documents_resynthesis(rng, kind):
    x = rng.uniform(-0.5, 0.5, (2, 8000 * 7 + 123)).astype(np.float32)  # several chunks
    doc = document(x, transform=kind)
    full = Resynthesizer(doc).full().numpy()
    out, snr = stream.roundtrip(x, make(8000, kind))
    assert out.shape == x.shape and out.dtype == np.float32
    assert np.max(np.abs(out - full)) < 1e-6  # the document's path goes through mag/phase
    assert snr == pytest.approx(snr_db(x, out), abs=1e-3) and snr > 120  # float32 sums
