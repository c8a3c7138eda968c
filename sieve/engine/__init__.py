"""The engine: streaming replies from models, playing runs and judging them. Never imports Textual.

`judge/` is the judge: a packet out, a card back, every quote verified.
"""
