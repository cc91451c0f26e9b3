from rag.retrieval.fusion import weighted_rrf


def test_rrf_rewards_items_both_retrievers_rank_high():
    fused = weighted_rrf({"lexical": ["a", "b", "c"], "dense": ["b", "a", "d"]}, {"lexical": 1.0, "dense": 1.0})
    assert [item for item, _, _ in fused][:2] in (["a", "b"], ["b", "a"])
    assert fused[0][2].keys() == {"lexical", "dense"}


def test_rrf_weight_keeps_the_stronger_retriever_in_charge():
    fused = weighted_rrf({"lexical": ["a", "b"], "dense": ["b", "c"]}, {"lexical": 1.0, "dense": 0.2})
    assert fused[0][0] == "b"  # in both lists
    fused = weighted_rrf({"lexical": ["a", "x"], "dense": ["c", "a"]}, {"lexical": 1.0, "dense": 0.2})
    assert fused[0][0] == "a"
    assert [i for i, _, _ in fused].index("c") > [i for i, _, _ in fused].index("x")
