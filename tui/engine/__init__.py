"""The engine: streaming replies from models and playing runs. Never imports Textual."""
