"""A whole-file repair that memory cannot hold is refused before any work, in one
line with its estimate (issue 51, item 3: `repair denoise` on 60 minutes of stereo
grew past the machine's 23 GiB and was killed, with no refusal up front)."""

import numpy as np
import pytest
import soundfile as sf

from app.session.repairs import MODULES, check_memory
from engine.errors import ParameterError
from tests.memory_group import memory_group, run_in

GiB = 2**30
SR = 44100


def test_the_issues_hour_of_stereo_is_refused_on_a_six_gib_machine_and_a_minute_is_not():
    hour, minute = 60 * 60 * SR, 60 * SR
    with pytest.raises(ParameterError) as refused:
        check_memory(MODULES["denoise"], channels=2, samples=hour, sample_rate=SR, have=6 * GiB)
    said = str(refused.value)
    assert "\n" not in said and said.startswith("denoise: De-noise of 60.0 min of 2-channel")
    assert "needs about 16.6 GiB" in said and "of the 6.0 GiB available" in said
    assert "a part of the file at a time" in said
    need = check_memory(MODULES["denoise"], channels=2, samples=minute, sample_rate=SR,
                        have=6 * GiB)
    assert 0.15 * GiB < need < 0.4 * GiB  # bench/bench_repair_memory.py: 39 B a sample


def test_every_module_declares_what_it_takes():
    for module in MODULES.values():
        assert 8 <= module.working_bytes <= 128, module.name


@pytest.mark.slow
def test_a_repair_that_would_be_killed_in_a_limited_group_is_refused_in_one_line(tmp_path):
    """Four minutes of stereo in a 1 GiB group: the document fits, de-noise's ~1 GiB of
    working memory does not. Before, the kernel killed it (no message); now one line,
    exit 2, and nothing written."""
    x = np.random.default_rng(0).uniform(-0.3, 0.3, (240 * SR, 2)).astype(np.float32)
    take, out = tmp_path / "take.wav", tmp_path / "fixed.wav"
    sf.write(take, x, SR, subtype="PCM_16")
    with memory_group(GiB) as folder:
        if folder is None:
            pytest.skip("no memory control group can be made on this machine")
        done = run_in(folder, "-m", "app.main", "repair", "denoise", str(take), "-o", str(out))
    assert done.returncode == 2, (done.returncode, done.stderr[-2000:])
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "De-noise of 4.0 min of 2-channel audio needs about" in lines[0]
    assert [p.name for p in tmp_path.iterdir()] == ["take.wav"]


def test_a_batch_with_a_repair_step_counts_the_modules_memory_in_each_files_peak(tmp_path):
    """Before, a batch's memory budget counted a file's document alone: two workers each
    de-noising a long file were admitted together past what the machine had."""
    from app.batch.budget import PeakEstimates

    take = tmp_path / "take.wav"
    sf.write(take, np.zeros((60 * SR, 2), np.float32), SR, subtype="PCM_16")
    painting, seconds = PeakEstimates({})(take)
    repairing, _ = PeakEstimates({}, [{"repair": "dehum"}, {"repair": "denoise", "set": {}},
                                      {"preset": "heal", "points": [[1, 0], [1, 9000]]}])(take)
    assert seconds == 60.0
    document = painting / 1.4  # the STFT's painting peak over its document (budget.py)
    assert repairing == pytest.approx(document + MODULES["denoise"].working_bytes * 2 * 60 * SR,
                                      rel=1e-6)
    assert repairing > painting
