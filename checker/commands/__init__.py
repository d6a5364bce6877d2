"""One module per CLI sub-command family; each exposes ``register(subparsers)``."""
