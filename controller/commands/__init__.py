"""One module per ``monster-match`` subcommand; each exposes ``register(subparsers)``."""
