"""Run the ASGI app with uvicorn in a background thread (the demo and tests use this)."""

from __future__ import annotations

import threading
import time

import uvicorn
from starlette.applications import Starlette


class WebServer:
    """uvicorn in a daemon thread; ``url`` is known once :meth:`start` returns."""

    def __init__(self, app: Starlette, host: str = "127.0.0.1", port: int = 0) -> None:
        config = uvicorn.Config(app, host=host, port=port, log_level="warning",
                                lifespan="off", timeout_graceful_shutdown=1)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, name="web", daemon=True)
        self.host = host
        self.app = app

    def start(self, timeout: float = 10.0) -> str:
        self.thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the web server did not start (is the port in use?)")
            time.sleep(0.02)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        self.url = f"http://{self.host}:{port}"
        return self.url

    def stop(self) -> None:
        stopping = getattr(self.app.state, "stopping", None)
        if stopping is not None:
            stopping.set()
        self.server.should_exit = True
        self.thread.join(timeout=5)
