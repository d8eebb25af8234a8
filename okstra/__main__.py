"""`python -m okstra …` runs the `okstra` command."""

from okstra_tui.entry import cli

if __name__ == "__main__":
    cli()
