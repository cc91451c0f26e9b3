from rag.retrieval.fusion import (
    convex_fusion,
    distribution_scores,
    normalized_scores,
    protect_confident,
    weighted_rrf,
)


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


def test_score_fusion_keeps_a_clear_lexical_winner_above_a_bunched_dense_list():
    lexical = [("a", 12.0), ("b", 4.0), ("c", 3.5)]
    dense = [("c", 0.871), ("b", 0.870), ("a", 0.869)]
    fused = convex_fusion({"lexical": lexical, "dense": dense}, {"lexical": 1.0, "dense": 0.4},
                          floors={"lexical": 0.0}, methods={"dense": "distribution"})
    assert fused[0][0] == "a"
    assert fused[0][2] == {"lexical": 1, "dense": 3}


def test_score_fusion_lets_dense_decide_between_lexical_ties():
    lexical = [("a", 5.0), ("b", 5.0)]
    dense = [("b", 0.93), ("x", 0.86), ("y", 0.85), ("a", 0.84)]
    fused = convex_fusion({"lexical": lexical, "dense": dense}, {"lexical": 1.0, "dense": 0.4},
                          floors={"lexical": 0.0}, methods={"dense": "distribution"})
    assert [item for item, _, _ in fused][:2] == ["b", "a"]


def test_distribution_scores_spread_an_outlier_from_the_pack():
    scores = distribution_scores([("top", 0.95), ("p1", 0.86), ("p2", 0.85), ("p3", 0.85), ("p4", 0.84)])
    assert scores["top"] - scores["p1"] > 0.3
    assert scores["p1"] - scores["p4"] < 0.1


def test_normalized_scores_map_the_floor_to_zero():
    assert normalized_scores([("a", 10.0), ("b", 5.0)], floor=0.0) == {"a": 1.0, "b": 0.5}


def test_a_lexically_confident_page_is_not_pushed_out_of_the_top_by_dense():
    # Dense loves d1..d5; lexical is sure about "right" (its best score), which fusion put sixth.
    fused = [(f"d{i}", 1.0 - i / 10, {}) for i in range(1, 6)] + [("right", 0.4, {"lexical": 1})]
    protected = protect_confident(fused, [("right", 9.0), ("d1", 2.0)], depth=5, ratio=0.8)
    top = [item for item, _, _ in protected[:5]]
    assert "right" in top and "d5" not in top
    assert [s for _, s, _ in protected] == sorted((s for _, s, _ in protected), reverse=True)


def test_an_unsure_lexical_candidate_gets_no_protection():
    fused = [(f"d{i}", 1.0 - i / 10, {}) for i in range(1, 6)] + [("weak", 0.4, {})]
    protected = protect_confident(fused, [("d1", 9.0), ("weak", 3.0)], depth=5, ratio=0.8)
    assert [item for item, _, _ in protected] == [item for item, _, _ in fused]


def test_only_eligible_candidates_are_protected():
    fused = [(f"d{i}", 1.0 - i / 10, {}) for i in range(1, 6)] + [("article", 0.4, {})]
    protected = protect_confident(fused, [("article", 9.0)], depth=5, ratio=0.8, eligible=lambda item: False)
    assert [item for item, _, _ in protected] == [item for item, _, _ in fused]
