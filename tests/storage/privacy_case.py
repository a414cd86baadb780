"""The question the privacy tests (SQLite and PostgreSQL) look for in every stored value."""

QUESTION = "How do I renew the TLS certificate of quokka-7731?"
MARKER = "quokka-7731"
