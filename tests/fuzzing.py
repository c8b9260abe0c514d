"""What fuzzing feeds us (hypothesis strategies): numbers of every kind, JSON values, a
stroke script's strokes; EXAMPLES a surface ($SPECPAINT_FUZZ, default 60)."""

import os

from hypothesis import strategies as st

EXAMPLES = int(os.environ.get("SPECPAINT_FUZZ", "60"))


numbers = st.one_of(st.integers(-10**6, 10**6), st.floats(allow_nan=True, allow_infinity=True),
                    st.sampled_from([0, 1, -1, 2**63, 1e308, 1e-9]))


scalars = st.one_of(st.none(), st.booleans(), numbers, st.text(max_size=12))


json_values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=12)


point = st.lists(numbers, min_size=0, max_size=4)


stroke = st.fixed_dictionaries(
    {"preset": st.sampled_from(["hard-eraser", "soft-eraser", "harmonic-eraser", "spot-repair",
                                "tone-pen"]),
     "points": st.lists(point, max_size=4)},
    optional={"set": st.dictionaries(st.sampled_from(["radius_ms", "radius_hz", "radius_cents",
                                                      "spacing", "opacity", "harmonics"]),
                                     numbers, max_size=3),
              "channel": scalars})
