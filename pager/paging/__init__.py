"""Paging a person: contact methods (methods.py: what each kind's address is, how it is
shown), the words of a page (messages.py), sending through one method (send.py), the
services that send a page with fall-through and manage contact methods (services/), the
queue (queue.py) and the one-tap acknowledge link and page (ack.py, views.py)."""
