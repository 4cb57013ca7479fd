"""dm_cc: a terminal coding assistant whose centre is an explainable permission engine."""

__version__ = "0.1.0"
