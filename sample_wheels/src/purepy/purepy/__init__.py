"""purepy: a pure-Python package with nothing for wheelfix to repair."""

__version__ = "1.0.0"


def greet(name):
    return f"hello, {name}"
