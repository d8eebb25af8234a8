"""okstra terminal app (Textual). Thin front end over okstra_core."""

from .interrupt import at_once, is_the_command

# First of all, for the `okstra` command: Ctrl-C during start-up is one line and 130.
if is_the_command():
    at_once()
