from rag.models import Chunk, Hit
from rag.retrieval.fusion import (
    convex_fusion,
    distribution_scores,
    merge_planned_hits,
    normalized_scores,
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


def hit(doc: str, article: str, part: int = 0) -> Hit:
    chunk = Chunk(chunk_id=f"{doc}{article}{part}", doc=doc, article=article, text=f"{doc} {article}", part=part)
    return Hit(chunk=chunk, score=1.0)


def test_merged_planned_queries_alternate_and_skip_repeated_articles():
    whole = [hit("법", "제17조"), hit("법", "제42조"), hit("법", "제27조")]
    first_part = [hit("법", "제17조", part=1), hit("법", "제67조")]
    second_part = [hit("법", "제42조"), hit("시행령", "제22조")]
    merged = merge_planned_hits([whole, first_part, second_part], 10)
    assert [f"{h.chunk.doc} {h.chunk.article}" for h in merged] == [
        "법 제17조", "법 제42조", "법 제67조", "시행령 제22조", "법 제27조", "법 제17조"]
    assert len(merge_planned_hits([whole, first_part, second_part], 3)) == 3
