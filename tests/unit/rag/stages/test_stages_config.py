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
