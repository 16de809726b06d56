"""The temporary API's application: Prefect's own, with its SQLite transactions taking the write lock as they begin.

Prefect's server opens its SQLite transactions DEFERRED: each reads, then writes. Two such transactions at once (the
task-run recorder writing the runs it hears of, and a request creating a flow run) cannot both upgrade to the write
lock, and SQLite refuses one at once, busy timeout or not ("database is locked", PrefectHQ/prefect#18934). The server
answers 503 and the client waits 2 s, then 4 s, before trying again: in a main job that was 5-10 s of standing still,
a few seconds at a time before a round's flow run could begin. Begun IMMEDIATE, the second transaction waits for the
first under the busy timeout, a few milliseconds here. Only this process's temporary API is changed; a served one
(PREFECT_API_URL) is the user's.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from prefect.server.database import dependencies
from prefect.server.database.configurations import AioSqliteConfiguration


class ImmediateSqliteConfiguration(AioSqliteConfiguration):
    """Every explicit transaction begins IMMEDIATE: writers queue for the lock instead of failing on it."""

    @asynccontextmanager
    async def begin_transaction(self, session, with_for_update: bool = False) -> AsyncIterator:
        async with super().begin_transaction(session, with_for_update=True) as transaction:
            yield transaction


def create_app():
    """Prefect's API application (`prefect.server.api.server.create_app`) on an SQLite database configured as above."""
    from prefect.server.api.server import create_app as prefect_app
    from prefect.server.utilities.database import get_dialect
    from prefect.settings import PREFECT_API_DATABASE_CONNECTION_URL

    url = PREFECT_API_DATABASE_CONNECTION_URL.value()
    if get_dialect(url).name == "sqlite" and dependencies.MODELS_DEPENDENCIES["database_config"] is None:
        dependencies.MODELS_DEPENDENCIES["database_config"] = ImmediateSqliteConfiguration(connection_url=url)
    return prefect_app()
