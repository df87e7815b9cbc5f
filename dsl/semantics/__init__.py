"""Meaning: names bound to cells, units resolved, the IR, the graph and the dimension check."""
