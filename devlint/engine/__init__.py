"""The staged engine: prefilter (bytes) -> triage (stdlib ast) -> concrete (LibCST, fixes only)."""
