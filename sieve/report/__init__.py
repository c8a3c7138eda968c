"""The report: a scenario's field published as a static site where every number opens on its quote.

`site.write` reads the record through sieve.store.scoring (results, RunView, cards, comparisons,
agreement, blind codes) and writes HTML that opens from `file://` with no server, no network and
no script needed. Outside text (replies, names, notes, scenario text) is data: it is escaped
where it meets the page (`markup.esc`), and no link takes its address from it.
"""
