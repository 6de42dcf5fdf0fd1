"""The retention models against the seeds' own numbers, and the properties every model keeps.

Expected values are worked out by hand from the seeds' formulas (the arithmetic is in the
comments), not read back from the code.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memvault.entries import retention as r
from memvault.entries.retention import Memory, Params

P = Params()


# --- seed 000: confidence × 0.95 per day ------------------------------------------------------

def test_exponential_halves_in_about_fourteen_days_as_the_seed_says():
    assert r.retention("exponential", Memory(14), P) == pytest.approx(0.48767, abs=1e-5)  # 0.95^14
    assert r.status(r.retention("exponential", Memory(13), P)) == "active"  # 0.95^13 = 0.5133
    assert r.status(r.retention("exponential", Memory(14), P)) == "fading"
    assert r.status(r.retention("exponential", Memory(44), P)) == "fading"  # 0.95^44 = 0.1047
    assert r.status(r.retention("exponential", Memory(45), P)) == "forgotten"  # 0.95^45 = 0.0994


def test_exponential_counts_from_the_latest_presentation_and_ignores_recalls():
    assert r.retention("exponential", Memory(30, (2,)), P) == pytest.approx(0.95**2)
    assert r.retention("exponential", Memory(30, accesses=9), P) == r.retention("exponential", Memory(30), P)


# --- seed 001: Ebbinghaus × importance, ACT-R, the max rule -------------------------------------

@pytest.mark.parametrize(("band", "ticks"), [("high", 150), ("medium", 100), ("low", 50)])
def test_the_seed_table_each_level_lasts_its_ticks(band, ticks):
    # The skill's table ("high ~150 ticks, medium ~100, low ~50") is S x multiplier: after that
    # many ticks the curve is at e^-1.
    assert r.ebbinghaus_part(Memory(ticks, importance=band), P) == pytest.approx(math.exp(-1))
    # and half of it is gone after ln 2 of that time: 104, 69, 35 ticks
    assert r.ebbinghaus_part(Memory(ticks * math.log(2), importance=band), P) == pytest.approx(0.5)


def test_one_presentation_of_medium_importance_at_100_ticks():
    # activation = ln(100^-0.5) + ln 1 = -2.302585; P = 1 / (1 + e^-(−2.302585 + 2.5)) = 0.549194
    m = Memory(100)
    assert r.activation(m, P) == pytest.approx(-2.302585, abs=1e-6)
    assert r.retrieval_probability(m, P) == pytest.approx(0.549194, abs=1e-6)
    # max(e^-1 = 0.367879, 0.549194): the ACT-R term carries it, still active
    assert r.forgetting_curve(m, P) == pytest.approx(0.549194, abs=1e-6)
    assert r.status(r.forgetting_curve(m, P)) == "active"


def test_importance_bonus_is_ln_of_the_multiplier():
    # high at 150: -0.5 ln 150 + ln 1.5 = -2.099 → P = 0.598723; curve e^-1 = 0.367879
    assert r.retention("forgetting-curve", Memory(150, importance="high"), P) == pytest.approx(0.598723, abs=1e-6)
    # low at 50: -0.5 ln 50 + ln 0.5 = -2.649 → P = 0.462779; curve e^-1 → fading
    low = r.retention("forgetting-curve", Memory(50, importance="low"), P)
    assert low == pytest.approx(0.462779, abs=1e-6)
    assert r.status(low) == "fading"


def test_the_curve_is_the_floor_early_on():
    # 10 ticks, medium: curve e^-0.1 = 0.904837; ACT-R -0.5 ln 10 = -1.151293 → P = 0.794081
    assert r.forgetting_curve(Memory(10), P) == pytest.approx(0.904837, abs=1e-6)


def test_a_presentation_right_now_counts_as_one_tick_ago():
    # lag floored at 1 tick: activation ln 1 = 0, P = logistic(2.5) = 0.924142; curve at age 0 = 1
    assert r.retrieval_probability(Memory(0.0), P) == pytest.approx(0.924142, abs=1e-6)
    assert r.forgetting_curve(Memory(0.0), P) == 1.0


def test_repeated_presentations_keep_an_old_memory_active():
    # one presentation 400 ticks ago (medium): -0.5 ln 400 = -2.995732 → P = 1 / (1 + e^0.495732) = 0.378544, fading
    once = r.forgetting_curve(Memory(400), P)
    assert once == pytest.approx(0.378544, abs=1e-6)
    # and again 100 and 4 ticks ago: ln(400^-.5 + 100^-.5 + 4^-.5) = ln 0.65 = -0.430783 → 0.887875
    thrice = r.forgetting_curve(Memory(400, (100, 4)), P)
    assert thrice == pytest.approx(0.887875, abs=1e-6)
    assert (r.status(once), r.status(thrice)) == ("fading", "active")


def test_access_bonus_is_0_08_each_up_to_ten():
    base = r.activation(Memory(100), P)
    assert r.activation(Memory(100, accesses=3), P) == pytest.approx(base + 0.24)
    assert r.activation(Memory(100, accesses=10), P) == pytest.approx(base + 0.8)
    assert r.activation(Memory(100, accesses=50), P) == pytest.approx(base + 0.8)


def test_when_a_single_presentation_is_forgotten():
    # P < 0.1 when activation < θ - ln 9, i.e. t > e^(2 (2.5 + ln k + ln 9)):
    # low 3005.4 ticks, medium 12021.5, high 27048.3
    for band, t in (("low", 3005.4), ("medium", 12021.5), ("high", 27048.3)):
        assert r.status(r.forgetting_curve(Memory(t - 1, importance=band), P)) == "fading"
        assert r.status(r.forgetting_curve(Memory(t + 1, importance=band), P)) == "forgotten"


def test_parameters_are_the_vaults():
    p = r.params_of({"strength": 10, "actr_decay": 1.0, "retrieval_threshold": 0})
    # curve e^(-10/10) = 0.367879; activation -ln 10 → P = 1 / (1 + 10) = 0.090909
    assert r.forgetting_curve(Memory(10), p) == pytest.approx(math.exp(-1))
    assert r.retrieval_probability(Memory(10), p) == pytest.approx(1 / 11)


# --- statuses and importance bands ---------------------------------------------------------------

@pytest.mark.parametrize(("value", "expected"), [
    (1.0, "active"), (0.5000001, "active"), (0.5, "fading"), (0.3, "fading"), (0.1, "fading"),
    (0.0999999, "forgotten"), (0.0, "forgotten"),
])
def test_statuses_are_the_seed_table(value, expected):
    assert r.status(value) == expected


@pytest.mark.parametrize(("importance", "curated", "expected"), [
    (0.9, False, "high"), (0.7, False, "high"), (0.69, False, "medium"), (0.5, False, "medium"),
    (0.31, False, "medium"), (0.3, False, "low"), (0.2, False, "low"), (0.0, False, "low"),
    (None, False, "medium"), (None, True, "high"), (0.2, True, "low"),
])
def test_importance_bands(importance, curated, expected):
    assert r.band(importance, curated) == expected


def test_an_unknown_model_names_the_known_ones():
    with pytest.raises(ValueError, match="forgetting-curve"):
        r.retention("nope", Memory(1), P)


# --- properties, for every model -----------------------------------------------------------------

ticks = st.floats(min_value=0, max_value=1e6, allow_nan=False)
params = st.builds(Params, rate=st.floats(0.01, 1), strength=st.floats(0.1, 1e4),
                   actr_decay=st.floats(0.05, 2), retrieval_threshold=st.floats(-20, 20))


@st.composite
def memories(draw):
    age = draw(ticks)
    repeats = tuple(draw(st.lists(st.floats(0, age), max_size=5)))
    return Memory(age, repeats, draw(st.sampled_from(["high", "medium", "low"])), draw(st.integers(0, 30)))


MODEL_NAMES = sorted(r.MODELS)


@settings(max_examples=300, deadline=None)
@given(m=memories(), p=params, model=st.sampled_from(MODEL_NAMES))
def test_retention_is_between_0_and_1(m, p, model):
    assert 0.0 <= r.retention(model, m, p) <= 1.0


@settings(max_examples=300, deadline=None)
@given(m=memories(), p=params, model=st.sampled_from(MODEL_NAMES), later=ticks)
def test_retention_never_rises_with_time_alone(m, p, model, later):
    aged = Memory(m.age + later, tuple(t + later for t in m.repeats), m.importance, m.accesses)
    assert r.retention(model, aged, p) <= r.retention(model, m, p) + 1e-12


@settings(max_examples=300, deadline=None)
@given(m=memories(), p=params, model=st.sampled_from(MODEL_NAMES), data=st.data())
def test_a_presentation_or_a_recall_never_lowers_retention(m, p, model, data):
    again = data.draw(st.floats(0, m.age))
    more = Memory(m.age, (*m.repeats, again), m.importance, m.accesses)
    recalled = Memory(m.age, m.repeats, m.importance, m.accesses + 1)
    before = r.retention(model, m, p)
    assert r.retention(model, more, p) >= before - 1e-12
    assert r.retention(model, recalled, p) >= before - 1e-12


def test_the_plot_draws_each_curve_where_the_table_says():
    from memvault.entries.retention import plot

    lines = plot("exponential", until=100, width=11, height=10).splitlines()
    assert len(lines) == 13 and lines[0].startswith(" 1.0 |*")  # all three start at 1.0, together
    assert lines[5].startswith(" 0.5 |-") and lines[9].startswith(" 0.1 |-")  # the thresholds
    # 0.95^10 = 0.60 at the second column (10 ticks): row 0.6, all three importances alike
    assert lines[4][len(" 0.6 |") + 1] == "*"
    curve = plot("forgetting-curve", until=400, width=21, height=10).splitlines()
    # after 400 ticks high importance is still active, low has faded below it
    last = {line[len(" 0.0 |") + 20] if len(line) > len(" 0.0 |") + 20 else " ": line[:4] for line in curve[:11]}
    assert float(last["H"]) > float(last["L"])
