"""okstra terminal app (Textual). Thin front end over okstra_core."""
