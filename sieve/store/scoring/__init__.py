"""Scoring: what the record adds up to (score cards, quotes, agreement, blind masking, results, Markdown).

It reads the record through sieve.store.record and writes to it only through the
record's own functions.
"""
