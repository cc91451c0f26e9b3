"""SmallTalkResponder: one fitting reply per kind, with examples from the indexed regulations."""

from rag import messages
from rag.stages.smalltalk import SmallTalkResponder


def test_a_goodbye_is_not_answered_with_a_hello():
    responder = SmallTalkResponder()
    assert responder.reply("goodbye") == messages.CHITCHAT_GOODBYE != responder.reply("greeting")


def test_each_kind_has_its_own_reply():
    responder = SmallTalkResponder()
    kinds = ["greeting", "thanks", "goodbye", "pause", "reaction", "apology", "identity", "capability", "usage",
             "other", "off_topic"]
    assert len({responder.reply(kind) for kind in kinds}) == len(kinds)


def test_a_morning_greeting_is_answered_in_kind():
    assert SmallTalkResponder().reply("greeting", "좋은 아침이에요~") == messages.CHITCHAT_MORNING


def test_what_can_i_ask_lists_the_indexed_documents_and_example_questions_from_them(samples):
    reply = SmallTalkResponder(samples.corpus).reply("capability")
    for doc in samples.corpus.documents():
        assert doc in reply
    examples = [line[2:] for line in reply.splitlines() if line.startswith("• ")]
    assert examples and all(any(q.startswith(doc) for doc in samples.corpus.documents()) for q in examples)
    titles = {c.title for c in samples.corpus.chunks if c.title}
    assert all(any(title in q for title in titles) for q in examples)


def test_how_to_use_shows_a_real_reference_to_look_up(samples):
    reply = SmallTalkResponder(samples.corpus).reply("usage")
    labels = {c.label for c in samples.corpus.chunks}
    assert any(f'"{label}"' in reply for label in labels)


def test_without_an_index_the_bot_still_says_what_it_does():
    reply = SmallTalkResponder().reply("capability")
    assert messages.CHITCHAT_DEFAULT_DOCUMENTS in reply
