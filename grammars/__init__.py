"""Built-in grammar files, installed as the package data ``exprsearch.grammars``."""
