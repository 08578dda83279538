"""The analysis layer: what is known about one file before any rule runs.

`prefilter` (stage 1, bytes), `triage` (stage 2: one `ast` parse, imports, the descent that
collects candidates into `model.FileFacts`), and what fixes are built from (`fixkit`: edits and
profile expressions; `infer`: the context-aware device). Imports only the evidence,
configuration and base layers."""
