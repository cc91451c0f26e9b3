"""StageTimeouts: a timeout under a name the stages do not read is refused, not silently left at its default."""

import pytest
from pydantic import ValidationError

from rag.stages.factory import StageTimeouts


def test_an_unknown_timeout_name_is_refused():
    with pytest.raises(ValidationError, match="delta_s"):
        StageTimeouts(delta_s=0.3)


def test_known_timeouts_are_kept():
    assert StageTimeouts(stream_hang_s=0.3).stream_hang_s == 0.3
