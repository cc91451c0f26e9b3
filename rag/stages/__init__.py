"""The pipeline's stages, one module each.

What other packages may import (modules are imported directly; nothing is re-exported here, so importing one part
does not load every stage):

- `factory`: `build_stages(...)` → `PipelineStages` (each stage the LLM implementation over its offline sibling,
  or the offline one); `config`: `StagesConfig` (every knob; `bot/config.py` reads `StageTuning` as
  `REGBOT_STAGES_*`).
- `contracts`: what the stages hand each other (`QueryUnderstanding`, `GradeResult`, `GenerationInput`,
  `DraftAnswer`, `GenerationEvent`, `VerificationResult` …) and the protocols `AnswerPipeline` calls.
- the stages themselves, for tests and benchmarks: `understanding`, `grader`, `rewriter`, `generator`,
  `verifier`, `followups`, `structural`, `smalltalk`, `legal_basis`, `changes`, `answerability`, `refusal` (what a
  refusal says and offers).
"""
