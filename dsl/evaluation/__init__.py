"""Numbers: the cells evaluated in dependency order, certain or uncertain."""
