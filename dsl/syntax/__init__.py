"""The text of a model: grammar, parser, syntax trees, line shapes and formatting."""
