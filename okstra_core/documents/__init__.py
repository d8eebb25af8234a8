"""Typed documents: every file okstra writes has one record that writes and reads it.

Each record is imported from its module (`base`, `inputs`, `resume`, `run`, `task`, …), so
a reader of one document does not pay for defining every other record.
"""
