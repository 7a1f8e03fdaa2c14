"""The text the language-model examples train on: real Python source that ships with every
Python install (a few modules of the standard library)."""
import os

CORPUS_MODULES = ("textwrap.py", "functools.py", os.path.join("collections", "__init__.py"))


def stdlib_source_text():
    """The source of the modules in ``CORPUS_MODULES``, joined into one string."""
    stdlib = os.path.dirname(os.__file__)
    texts = []
    for name in CORPUS_MODULES:
        with open(os.path.join(stdlib, name), encoding="utf-8") as f:
            texts.append(f.read())
    return "\n".join(texts)
