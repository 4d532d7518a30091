"""specpack's version, in a module of its own so that anything can read it without the package."""

__version__ = "0.3.0.dev0"
