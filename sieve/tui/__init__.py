"""The Textual app: `app` (SieveApp), its screens, widgets and styles. The only part of sieve that imports Textual."""
