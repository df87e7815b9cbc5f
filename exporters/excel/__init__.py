"""Excel formula text: printed from sympy or from the IR, with names and numbers Excel reads."""
