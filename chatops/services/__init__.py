"""chatops' writes: requests from chat (interactions.py) and the audit of what a chat user
did (audit.py)."""
