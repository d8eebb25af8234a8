"""Names scripts/dead_code.py must count as used: each is reached in a way vulture
cannot see (read as code by vulture; never imported)."""

# ruff: noqa: B018, F821

# Views and aliases: a record's `views=(...)` / `aliases={...}` name these properties in
# strings, and its JSON carries them (life/doctor.py, life/lead.py, life/prune.py,
# life/resume.py, errors.py).
_.resolved_path
_.path_entry
_.was_running
_.removed_dirs
_.pending_refs
_.run_state

# jinja2 calls these: the bounded sandbox's generated code (`environment.bounded_iter`,
# `bounded_concat`, `bounded_buffer`, prepare/template_bounds.py), a loader's
# `get_source` and a bytecode cache's `load_bytecode` / `dump_bytecode` (the same module).
_.bounded_iter
_.bounded_concat
_.bounded_buffer
_.get_source
_.load_bytecode
_.dump_bytecode

# Textual calls it when a screen's bindings change (widgets/history.py).
_.bindings_changed

# The context-manager protocol names its arguments (store/atomic.py).
exc_type
