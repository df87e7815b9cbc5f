"""The standard library, written in the language: hardware, llm and formulas (`use hardware: h100`)."""
