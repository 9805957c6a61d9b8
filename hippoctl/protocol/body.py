"""The base of every request body, apart so the verbs' bodies can live in modules of their own."""

import msgspec


class Body(msgspec.Struct, tag=True, tag_field="t", omit_defaults=True):
    """Base of every request body."""
