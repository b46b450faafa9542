import subprocess
import sys

import pytest

from controller.auth import Auth, AuthError, Role
from controller.storage import Store


def add(db, name, role, password):
    return subprocess.run([sys.executable, "-m", "controller", "user", "add", "--db", db,
                           "--name", name, "--role", role, "--password-stdin"],
                          input=password + "\n", capture_output=True, text=True, timeout=60)


def test_user_add_hashes_and_refuses_bad_input(tmp_path):
    db = str(tmp_path / "u.db")
    res = add(db, "alice", "floorperson", "correct horse battery")
    assert res.returncode == 0 and "added floorperson alice" in res.stdout
    assert add(db, "alice", "dealer", "another long one").returncode != 0
    short = add(db, "bob", "dealer", "short")
    assert short.returncode != 0 and "at least" in short.stderr
    store = Store(db)
    auth = Auth(store)
    assert auth.actor(auth.login("alice", "correct horse battery")).role is Role.FLOORPERSON
    with pytest.raises(AuthError):
        auth.login("alice", "wrong password!")
    row = store.db.execute("SELECT hash FROM users WHERE name='alice'").fetchone()
    assert b"correct horse" not in bytes(row[0])
    store.close()
