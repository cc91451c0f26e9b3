"""MarkdownLoader's text check: binary data under a text name is refused, real encodings are read."""

from __future__ import annotations

import pytest

from rag.errors import IngestError
from rag.knowledge.loaders.markdown import MarkdownLoader, looks_like_text
from tests.unit.rag.knowledge.loaders.document_factories import SAMPLE_LINES, write

SAMPLE_TEXT = "\n".join(SAMPLE_LINES)


class TestLooksLikeText:
    @pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "cp949", "utf-16"])
    def test_korean_text_in_common_encodings_is_text(self, encoding):
        assert looks_like_text(SAMPLE_TEXT.encode(encoding))

    def test_a_multibyte_character_cut_at_the_sample_end_is_still_text(self):
        head = ("가" * 3000).encode("utf-8")[:8192]
        assert looks_like_text(head)

    @pytest.mark.parametrize("data", [
        bytes(range(1, 256)) * 40,  # control bytes everywhere, no NUL
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",  # a NUL byte
    ])
    def test_binary_data_is_not_text(self, data):
        assert not looks_like_text(data)


class TestMarkdownLoaderEncodings:
    def test_utf16_text_file_from_windows_notepad_is_read(self, tmp_path):
        loaded = MarkdownLoader().load(write(tmp_path, "rules.txt", SAMPLE_TEXT.encode("utf-16")))
        assert loaded.text.splitlines() == SAMPLE_LINES

    def test_binary_content_past_the_sniffed_head_is_refused(self, tmp_path):
        data = SAMPLE_TEXT.encode("utf-8") + bytes(range(1, 32)) * 400
        with pytest.raises(IngestError, match=r"^mixed\.md: binary content, not text$"):
            MarkdownLoader().load(write(tmp_path, "mixed.md", data))
