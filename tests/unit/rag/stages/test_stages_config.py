"""StagesConfig: a knob under a name the stages do not read is refused, not silently left at its default."""

import pytest
from pydantic import ValidationError

from rag.stages.config import StagesConfig, StageTuning


def test_an_unknown_knob_name_is_refused():
    with pytest.raises(ValidationError, match="delta_s"):
        StagesConfig(delta_s=0.3)


def test_known_knobs_are_kept():
    assert StagesConfig(stream_hang_s=0.3).stream_hang_s == 0.3


def test_the_tuning_is_part_of_the_config():
    tuning = StageTuning(grade_pass_score=60.0)

    assert StagesConfig(**tuning.model_dump()).grade_pass_score == 60.0


def test_the_lead_values_default_to_their_fit():
    # benchmarks/lead_fit.py writes them with their cross-validation; StageTuning reads them as its defaults.
    import yaml

    from rag.stages.config import LEAD_FIT

    values = (yaml.safe_load(LEAD_FIT.read_text(encoding="utf-8")) or {}).get("values") or {}
    tuning = StageTuning()
    assert all(getattr(tuning, name) == value for name, value in values.items())
