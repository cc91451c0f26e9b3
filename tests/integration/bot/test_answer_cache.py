"""The semantic answer cache as the server wires it: in the state store, counted in /metrics."""

from bot.app import build_components
from bot.service.limits import LimitsConfig
from bot.service.metrics import Metrics
from bot.service.service import BotService
from bot.state import StateStores
from rag.models import Turn
from testkit import SAMPLES, HashingEmbedder, make_settings


async def ask(service: BotService, text: str, turn_id: str):
    answer = None
    async for event in service.answer(Turn(turn_id=turn_id, text=text, conversation_key=f"cli:{turn_id}",
                                           user=turn_id)):
        if event.answer is not None:
            answer = event.answer
    return answer


async def test_a_repeated_question_is_answered_from_the_cache_and_counted(tmp_path, kiwi_tokenizer):
    store = StateStores.in_process()
    components = build_components(make_settings(tmp_path), embedder=HashingEmbedder(), tokenizer=kiwi_tokenizer,
                                  cache_backend=store.cache)
    components.ingestor().ingest([SAMPLES])
    metrics = Metrics()
    service = BotService(pipeline=components.pipeline, store=store, metrics=metrics,
                         limits=LimitsConfig(user_burst=0, workspace_burst=0))

    # A question the judge answers outright (a hedge is not cached), also under the test's hashing embedder.
    first = await ask(service, "입사 1년 지나면 연차 며칠 받아?", "a")
    second = await ask(service, "입사 1년 지나면 연차 며칠 받아?", "b")

    assert first.cache == "miss" and second.cache == "hit"
    assert second.text == first.text
    assert [c.label for c in second.citations] == [c.label for c in first.citations]
    assert 'regbot_cache_lookups_total{result="hit"} 1.0' in metrics.render().decode()


async def test_cache_off_answers_a_repeated_question_afresh(tmp_path, kiwi_tokenizer):
    store = StateStores.in_process()
    settings = make_settings(tmp_path, REGBOT_CACHE_ENABLED="false")
    components = build_components(settings, embedder=HashingEmbedder(), tokenizer=kiwi_tokenizer,
                                  cache_backend=store.cache)
    components.ingestor().ingest([SAMPLES])
    service = BotService(pipeline=components.pipeline, store=store, metrics=Metrics(),
                         limits=LimitsConfig(user_burst=0, workspace_burst=0))

    first = await ask(service, "입사 1년 지나면 연차 며칠 받아?", "a")
    second = await ask(service, "입사 1년 지나면 연차 며칠 받아?", "b")

    assert (first.cache, second.cache) == ("off", "off")
    assert "retrieve" in second.timings_ms


async def test_reingest_invalidates_the_cache(tmp_path, kiwi_tokenizer):
    store = StateStores.in_process()
    folder = tmp_path / "docs"
    folder.mkdir()
    rules = folder / "rules.md"
    rules.write_text("# 휴가 지침\n\n##### 제1조 (반차)\n\n반차는 4시간 단위로 쓴다.\n", encoding="utf-8")
    components = build_components(make_settings(tmp_path / "data"), embedder=HashingEmbedder(),
                                  tokenizer=kiwi_tokenizer, cache_backend=store.cache)
    components.ingestor().ingest([folder])
    service = BotService(pipeline=components.pipeline, store=store, metrics=Metrics(),
                         limits=LimitsConfig(user_burst=0, workspace_burst=0))
    assert "4시간" in (await ask(service, "반차는 몇 시간 단위야?", "a")).text

    rules.write_text("# 휴가 지침\n\n##### 제1조 (반차)\n\n반차는 2시간 단위로 쓴다.\n", encoding="utf-8")
    components.ingestor().ingest([folder])
    again = await ask(service, "반차는 몇 시간 단위야?", "b")
    assert again.cache == "miss"
    assert "2시간" in again.text
