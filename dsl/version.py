"""The version of ifr, in a module of its own: the syntax cache keys its
entries on it, and the parsing phase may not import the package, whose
entry points run the whole pipeline."""

VERSION = "0.1.0"
