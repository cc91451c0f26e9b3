"""A Chroma server that is down at start-up turns dense retrieval off (lexical only) instead of crashing."""

from __future__ import annotations

import pytest

from rag.errors import RetrievalUnavailable
from rag.retrieval.dense import open_chroma_client
from testkit import free_port


def test_an_unreachable_chroma_url_is_retrieval_unavailable_naming_the_url():
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    with pytest.raises(RetrievalUnavailable, match=f"not reachable at {url}"):
        open_chroma_client(chroma_url=url)
