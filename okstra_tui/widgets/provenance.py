"""Why a value is there, in the catalog's words: `default:bundled` → "okstra's default"
(the engine records provenance as codes: `chosen`, `default:<scope>`, `reused:<run>`)."""

from __future__ import annotations

from okstra_core.wizard.text import WizardText


def provenance_words(code: str | None, text: WizardText) -> str:
    """The catalog's words for a provenance code ("" for none; unknown codes as is)."""
    if not code:
        return ""
    kind, _, detail = code.partition(":")
    if kind == "default" and text.has(f"app.provenance.default_{detail}"):
        return text.get(f"app.provenance.default_{detail}")
    if kind == "reused" and detail:
        return text.get("app.provenance.reused", run=detail)
    if kind == "converted" and detail:
        return text.get("app.provenance.converted", version=detail)
    if text.has(f"app.provenance.{kind}") and not detail:
        return text.get(f"app.provenance.{kind}")
    return code
