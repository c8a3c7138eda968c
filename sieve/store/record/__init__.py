"""The record: the schema and its migrations, runs, turns, annotations, pairs, bundles.

What was played and what reviewers said about it, as it was stored. Nothing here
imports the scoring (sieve.store.scoring), the engine or the app.
"""
