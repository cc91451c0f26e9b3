"""The generator stage: writes the cited answer.

Offline it is extractive (`ExtractiveGenerator`: it quotes the best paragraphs, each cited); with an LLM,
`LlmGenerator` streams an answer in which every claim cites a numbered source, falling back to the extractive one.
The prompts and the follow-up block the LLM appends have their own modules.
"""

from rag.stages.generator.extractive import ExtractiveGenerator
from rag.stages.generator.followup_block import FOLLOWUP_MARKER, FollowupSplitter
from rag.stages.generator.llm import LlmGenerator
from rag.stages.generator.prompts import GENERATE_PROMPT

__all__ = ["FOLLOWUP_MARKER", "GENERATE_PROMPT", "ExtractiveGenerator", "FollowupSplitter", "LlmGenerator"]
