"""memdir-lsp: the language server for memory directories."""
