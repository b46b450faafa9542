import importlib.util
import random
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

from controller.auth import Auth, Role
from controller.config import load_config
from controller.rounds import Table
from controller.storage import Store


class Harness:
    """A table on a real SQLite file with a signed-in dealer and floorperson."""

    def __init__(self, path, seed=1):
        self.path = path
        self.cfg = load_config()
        self.store = Store(path)
        self.lights = []
        self.table = Table(self.store, self.cfg, rng=random.Random(seed),
                           on_lights=self.lights.append)
        self.auth = Auth(self.store)
        self.actors = {}
        for role in Role:
            name = f"{role.value}1"
            if not self.store.db.execute("SELECT 1 FROM users WHERE name=?", (name,)).fetchone():
                self.auth.add_user(name, role, f"pw-{role.value}-0123")
            self.actors[role] = self.auth.actor(self.auth.login(name, f"pw-{role.value}-0123"))

    @property
    def dealer(self):
        return self.actors[Role.DEALER]

    @property
    def floor(self):
        return self.actors[Role.FLOORPERSON]

    def reopen(self, seed=2):
        self.store.close()
        self.__init__(self.path, seed)

    def play_to_deal(self, wagers=(1, 3), mains=(1, 2, 3)):
        t = self.table
        t.open_round()
        for s in mains:
            t.set_main(s, True)
        for s in wagers:
            t.place_wager(s)
        t.lockout()
        t.chip_count(len(wagers), self.dealer)

    def deal(self, *codes):
        return [self.table.deal(c) for c in codes]


@pytest.fixture
def harness(tmp_path):
    h = Harness(tmp_path / "table.db")
    yield h
    h.store.close()


@pytest.fixture
def dealt_service(tmp_path):
    """A :class:`controller.service.TableService` on a real SQLite file whose round has one
    wager locked out and its first card (KH) dealt: the state a camera check happens in.
    Yields the service and the round's id."""
    from controller.service import TableService

    store = Store(tmp_path / "t.db")
    svc = TableService(store, load_config(), rng=random.Random(1))
    svc.auth.add_user("dealer", Role.DEALER, "dealer-pass-123")
    t = svc.table
    svc.call(t.open_round)
    svc.call(t.set_main, 1, True)
    svc.call(t.place_wager, 1)
    svc.call(t.lockout)
    svc.call(t.chip_count, 1, svc.actor(svc.auth.login("dealer", "dealer-pass-123")))
    svc.call(t.deal, "KH")
    yield svc, t.current().id
    store.close()


def load_benchmark(name: str) -> ModuleType:
    """The script ``benchmarks/<name>.py`` loaded by path (the benchmarks are scripts, not a
    package)."""
    path = Path(__file__).resolve().parent.parent / "benchmarks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture
def bench_script() -> Callable[[str], ModuleType]:
    """:func:`load_benchmark`: ``bench_script("vision_misses").main([...])``."""
    return load_benchmark
