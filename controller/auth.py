"""Users, roles and sign-in sessions.

Passwords are stored as scrypt hashes with a per-user salt; there are no default accounts or
passwords. A sign-in returns a random session token; only its SHA-256 is stored, so a copy of
the database does not let anyone act as a signed-in user. Every controller action that needs a
person checks the token and the role on the server side.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass
from enum import Enum

from controller.storage import Store


class Role(Enum):
    DEALER = "dealer"
    FLOORPERSON = "floorperson"
    SURVEILLANCE = "surveillance"  # read-only
    ADMINISTRATOR = "administrator"


class AuthError(PermissionError):
    """Sign-in failed, the session is missing or expired, or the role may not do this."""


@dataclass(frozen=True)
class Actor:
    """A signed-in person (or a device standing for one) as recorded in the audit trail."""

    name: str
    role: Role

    def __str__(self) -> str:
        return f"{self.name} ({self.role.value})"


# scrypt cost: n=2**14, r=8, p=1 is the interactive-login setting recommended in the scrypt
# paper and by OWASP; ~50 ms on a laptop core.
_SCRYPT = {"n": 2**14, "r": 8, "p": 1, "dklen": 32}
MIN_PASSWORD = 10
# Sign-in throttling: after this many failed attempts for one user name within the window,
# further attempts are refused (without checking the password) until the window has passed.
MAX_FAILURES = 5
FAILURE_WINDOW_S = 300.0


def _hash_password(password: str, salt: bytes) -> bytes:
    return hashlib.scrypt(password.encode(), salt=salt, maxmem=64 * 1024 * 1024, **_SCRYPT)


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class Auth:
    def __init__(self, store: Store, session_minutes: int = 30) -> None:
        self.store = store
        self.session_seconds = session_minutes * 60

    def add_user(self, name: str, role: Role, password: str, by: str = "setup") -> None:
        if not name or not name.replace("-", "").replace("_", "").replace(".", "").isalnum():
            raise AuthError("user names are letters, digits, '-', '_' and '.'")
        if len(password) < MIN_PASSWORD:
            raise AuthError(f"passwords need at least {MIN_PASSWORD} characters")
        salt = secrets.token_bytes(16)
        with self.store.transaction() as db:
            if db.execute("SELECT 1 FROM users WHERE name = ?", (name,)).fetchone():
                raise AuthError(f"user {name!r} already exists")
            db.execute("INSERT INTO users(name, role, salt, hash, created) VALUES(?,?,?,?,?)",
                       (name, role.value, salt, _hash_password(password, salt), time.time()))
            self.store.append_audit(None, by, "user_added", {"user": name, "role": role.value})

    def login(self, name: str, password: str) -> str:
        """Check the password and return a new session token."""
        since = time.time() - FAILURE_WINDOW_S
        failures = self.store.db.execute(
            "SELECT COUNT(*) FROM audit WHERE kind = 'login_failed' AND actor = ? AND at > ?",
            (name or "?", since)).fetchone()[0]
        if failures >= MAX_FAILURES:
            raise AuthError(f"too many failed sign-ins for {name!r}: wait "
                            f"{int(FAILURE_WINDOW_S // 60)} minutes or ask an administrator")
        row = self.store.db.execute(
            "SELECT role, salt, hash FROM users WHERE name = ? AND active = 1", (name,)).fetchone()
        # Hash even for an unknown user so timing does not tell which names exist.
        salt = row["salt"] if row else b"\0" * 16
        digest = _hash_password(password, salt)
        if row is None or not hmac.compare_digest(digest, row["hash"]):
            with self.store.transaction():
                self.store.append_audit(None, name or "?", "login_failed", {"user": name})
            raise AuthError("wrong user name or password")
        token = secrets.token_urlsafe(32)
        now = time.time()
        with self.store.transaction() as db:
            db.execute("INSERT INTO sessions VALUES(?,?,?,?,?)",
                       (_token_hash(token), name, row["role"], now, now + self.session_seconds))
            self.store.append_audit(None, name, "login", {"user": name, "role": row["role"]})
        return token

    def logout(self, token: str) -> None:
        with self.store.transaction() as db:
            db.execute("DELETE FROM sessions WHERE token_hash = ?", (_token_hash(token),))

    def actor(self, token: str | None, *allowed: Role) -> Actor:
        """The signed-in actor of ``token``, if the session is live and the role is allowed."""
        if not token:
            raise AuthError("sign-in required")
        row = self.store.db.execute(
            "SELECT user, role, expires FROM sessions WHERE token_hash = ?",
            (_token_hash(token),)).fetchone()
        if row is None or row["expires"] < time.time():
            raise AuthError("session expired or unknown: sign in again")
        actor = Actor(row["user"], Role(row["role"]))
        if allowed and actor.role not in allowed:
            names = " or ".join(r.value for r in allowed)
            raise AuthError(f"{actor} may not do this: it needs a {names}")
        return actor
