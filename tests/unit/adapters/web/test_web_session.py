"""The playground's identity is issued by the server (issue 28): a signed HttpOnly cookie, and budgets per client
address and in all, so a browser that invents a fresh user id per question is still limited."""

from __future__ import annotations

from adapters.web.session import PlaygroundBudget, PlaygroundSessions
from tests.fakes.clock import FakeClock


class FakeRequest:
    def __init__(self, cookie: str = "") -> None:
        self.cookies = {"regbot_session": cookie} if cookie else {}


def test_a_valid_cookie_keeps_its_session_and_a_forged_one_gets_a_new_session() -> None:
    sessions = PlaygroundSessions(b"k" * 32)
    issued = sessions.of(FakeRequest())

    kept = sessions.of(FakeRequest(issued.cookie))
    forged = sessions.of(FakeRequest(issued.session_id + ".0" + "0" * 31))
    other_key = PlaygroundSessions(b"x" * 32).of(FakeRequest(issued.cookie))

    assert issued.new and not kept.new and kept.user == issued.user
    assert forged.new and forged.user != issued.user
    assert other_key.new


def test_fresh_sessions_from_one_address_are_still_limited() -> None:
    clock = FakeClock()
    budget = PlaygroundBudget(per_address_per_min=5, total_per_min=1000, clock=clock)

    waits = [budget.take("203.0.113.7") for _ in range(6)]

    assert waits[:5] == [0.0] * 5
    assert waits[5] > 0
    assert budget.take("198.51.100.1") == 0.0  # another address has its own budget


def test_the_total_budget_holds_across_addresses_and_refills() -> None:
    clock = FakeClock()
    budget = PlaygroundBudget(per_address_per_min=100, total_per_min=3, clock=clock)

    waits = [budget.take(f"10.0.0.{n}") for n in range(4)]
    clock.advance(20)  # a third of a minute: one question's worth

    assert waits == [0.0, 0.0, 0.0, waits[3]] and waits[3] > 0
    assert budget.take("10.0.0.9") == 0.0
