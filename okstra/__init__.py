"""`python -m okstra`: the same command as the installed `okstra` script.

The code lives in `okstra_core` (the library, no Textual) and `okstra_tui` (the app);
this package only gives the product's own name to `python -m`.
"""
