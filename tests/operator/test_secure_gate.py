"""The review cache of secure /metrics: bounded, tokens kept only hashed, decisions per whole user."""

from __future__ import annotations

import asyncio
from typing import Any

from aim_core.operator.secure import Gate


class Reviews:
    """An API server that knows tokens and allows a group, counting the reviews it answers."""

    def __init__(self, users: dict[str, dict[str, Any]], allowed_group: str = "metrics-readers") -> None:
        self.users = users
        self.allowed_group = allowed_group
        self.sent: list[dict[str, Any]] = []
        self.release: asyncio.Event | None = None

    async def create(self, ref: Any, body: dict[str, Any]) -> dict[str, Any]:
        self.sent.append(body)
        if self.release is not None:
            await self.release.wait()
        if body["kind"] == "TokenReview":
            user = self.users.get(body["spec"]["token"])
            return {"status": {"authenticated": user is not None, **({"user": user} if user else {})}}
        return {"status": {"allowed": self.allowed_group in body["spec"]["groups"]}}


async def test_a_decision_is_kept_for_the_whole_user_not_its_name():
    api = Reviews(
        {
            "reader": {"username": "ci", "groups": ["metrics-readers"]},
            "other": {"username": "ci", "groups": ["developers"]},  # the same name, other groups
        }
    )
    gate = Gate(lambda: api)
    assert (await gate.check("Bearer reader", "get", "/metrics"))[0] == 200
    assert (await gate.check("Bearer other", "get", "/metrics"))[0] == 403
    assert (await gate.check("Bearer reader", "get", "/metrics"))[0] == 200
    assert [b["kind"] for b in api.sent].count("SubjectAccessReview") == 2


async def test_the_caches_are_bounded_and_hold_no_token():
    secret = "eyJhbGciOiJSUzI1NiJ9.the-real-token"
    api = Reviews({secret: {"username": "prometheus", "groups": ["metrics-readers"]}})
    gate = Gate(lambda: api, cache_size=8)
    assert (await gate.check(f"Bearer {secret}", "get", "/metrics"))[0] == 200
    for i in range(200):  # made-up tokens, each asked about once
        assert (await gate.check(f"Bearer made-up-{i}", "get", "/metrics"))[0] == 401
    assert len(gate._users) <= 8 and len(gate._decisions) <= 8
    assert secret not in repr(gate._users) and "made-up" not in repr(gate._users)


async def test_a_flood_waiting_for_reviews_is_refused_beyond_the_bound():
    api = Reviews({})
    api.release = asyncio.Event()
    gate = Gate(lambda: api, max_pending=4)
    waiting = [asyncio.create_task(gate.check(f"Bearer t{i}", "get", "/metrics")) for i in range(4)]
    await asyncio.sleep(0)
    code, why = await gate.check("Bearer one-more", "get", "/metrics")
    assert code == 503 and "too many" in why
    api.release.set()
    assert [(await t)[0] for t in waiting] == [401] * 4
    assert (await gate.check("Bearer later", "get", "/metrics"))[0] == 401  # the bound is free again
