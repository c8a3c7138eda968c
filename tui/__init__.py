"""The application: CLI, model gateway, session runner and the Textual app.

Only tui/app.py, tui/screens/ and tui/widgets/ may import Textual.
"""
