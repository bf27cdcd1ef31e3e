"""The console platform: the web layer, sign-in and roles, audit, liveness and the
outgoing-call guard every app stands on."""
