"""Code structure: tree-sitter parsing, outlines, and the on-disk index of definitions."""
