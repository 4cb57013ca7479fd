"""dm_cc: a terminal coding assistant whose centre is an explainable permission engine."""

__all__ = ["__version__"]

__version__ = "0.1.0"
