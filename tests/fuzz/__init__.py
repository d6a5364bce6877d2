"""Fuzz tests of the command line's contract on bad input (exit 0/1 a verdict, 2 bad input with a
positioned one-line message, never a traceback, a hang or an output over an input)."""
