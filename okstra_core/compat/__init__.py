"""The compatibility wing: what the earlier okstra wrote and accepted, read as today's.

The earlier okstra's wizard state files (v1, and its own v2 shape) and their
companion files, and its `okstra prepare` flags and `OKSTRA_DEFAULT_*` variables.
"""
