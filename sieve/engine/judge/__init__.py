"""The judge: a reviewer whose hand is a model.

- `runs`: judging runs (one packet per part, the parts' answers combined and stored);
- `pairs`: blind head-to-head judging of a pair queue;
- `packet`: what is asked and shown; `prompt`: in what words; `reply`: reading the answer;
- `exchange`: one packet's conversation, every quote verified, a repair asked once;
- `client`: the judge's model, its settings and what it spent.
"""
