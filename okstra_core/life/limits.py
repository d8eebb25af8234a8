"""The bounds of the team's actions, named once for the CLI's parser and the MCP schemas
(importing nothing, so a parser can name them without loading `life.actions`)."""

# The longest one wait may block (a week), and the longest grace a stop gives.
MAX_WAIT_SECONDS = 7 * 86400.0
MAX_GRACE_SECONDS = 3600.0
DEFAULT_GRACE_SECONDS = 10.0
# The largest prompt (in UTF-8), given as text or as a file.
MAX_PROMPT_BYTES = 4 * 1024 * 1024
# What `worker result` shows unless asked for all of it (`full`).
RESULT_SHOWN_BYTES = 1024 * 1024
