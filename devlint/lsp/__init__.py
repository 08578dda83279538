"""The language server (`devlint server`); see devlint.lsp.server."""
